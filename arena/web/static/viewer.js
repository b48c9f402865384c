// The replay viewer's animation: instant stepping, play/pause and keyboard arrows over the page's
// server-rendered markup. Without JavaScript the same page works through its links (one step per
// page load); this script draws the same markup from the deal the server embedded, and fetches every
// other deal from /api/matches/ID/timeline?deal=K when it is picked (a bounded cache keeps the last
// few), so a long match's page stays small.
(function () {
  "use strict";
  const root = document.getElementById("viewer");
  if (!window.ElfernBoard) return;
  const blob = document.getElementById("timeline-data");
  if (!root || !blob) return;
  const tl = JSON.parse(blob.textContent);  // seats, deck, deal_count; deals[0] is the shown deal
  if (!tl.deals.length) return;
  const view = root.dataset.view;
  const bottom = view === "1" ? 1 : 0;
  const count = tl.deal_count;
  const CACHED = 64;  // deals kept in the page (about 10 KB each)
  const cache = new Map([[tl.deal, tl]]);
  let deal = Number(root.dataset.deal);
  let step = Number(root.dataset.step);
  let timer = null;
  let wanted = 0;  // the newest navigation: an older one that finishes loading later is dropped

  const B = window.ElfernBoard;  // board.js: the one drawing of the table, shared with the live page
  const esc = B.esc;
  const cardName = (code) => B.cardName(code, tl.deck);
  const dealOf = (d) => cache.get(d).deals[0];
  const lastStep = (d) => dealOf(d).steps.length - 1;
  const href = (d, s) => `/matches/${root.dataset.match}?deal=${d}&step=${s}&view=${view}`;  // s < 0: from the end

  async function load(d) {  // a deal's answer, fetched once
    if (cache.has(d)) { const hit = cache.get(d); cache.delete(d); cache.set(d, hit); return hit; }
    const r = await fetch(`/api/matches/${root.dataset.match}/timeline?deal=${d}&view=${view}`,
      { headers: { Accept: "application/json" } });
    if (!r.ok) throw new Error(`deal ${d}: HTTP ${r.status}`);
    const got = await r.json();
    cache.set(d, got);
    while (cache.size > CACHED) {
      const old = [...cache.keys()].find((k) => k !== deal);
      cache.delete(old);
    }
    return got;
  }

  function setLink(el, target) {
    if (!el) return;
    if (target) { el.setAttribute("href", href(target[0], target[1])); el.removeAttribute("aria-disabled"); }
    else { el.removeAttribute("href"); el.setAttribute("aria-disabled", "true"); }
  }
  const prevOf = () => step > 0 ? [deal, step - 1] : deal > 1 ? [deal - 1, -1] : null;
  const nextOf = () => step < lastStep(deal) ? [deal, step + 1] : deal < count ? [deal + 1, 0] : null;

  function rowHtml(r) {
    const seat = (n) => n === null || n === undefined ? "?" : esc(tl.seats[n]);
    const winner = !r.complete ? '<span class="muted">unfinished</span>' : r.winner === null ? B.STAENDER : seat(r.winner);
    return `<tr${r.number === deal ? ' class="current"' : ""}><td data-label="Deal"><a class="deal-link" data-deal="${r.number}" href="${href(r.number, 0)}">${r.number}</a></td>` +
      `<td data-label="Dealer">${seat(r.dealer)}</td><td data-label="Honours">${r.honours.join("–")}</td><td data-label="Winner">${winner}</td>` +
      `<td data-label="Lines">${r.lines.join("–")}${r.multiplier > 1 ? ` (×${r.multiplier})` : ""}${r.pot ? ` (+${r.pot} pot)` : ""}</td><td data-label="Total">${r.totals.join("–")}</td></tr>`;
  }

  function renderRows() {  // the summary rows around the deal, as its answer carries them
    const rows = cache.get(deal).rows;
    const body = document.querySelector("#deal-results tbody");
    if (!body || !rows.length) return;
    const first = rows[0].number;
    const last = rows[rows.length - 1].number;
    if (Number(body.dataset.first || 0) !== first) {
      body.innerHTML = rows.map(rowHtml).join("");
      body.dataset.first = first;
      const range = document.getElementById("rows-range");
      if (range) {
        range.innerHTML = `Deals ${first}–${last} of ${count}` +
          (first > 1 ? ` · <a id="rows-earlier" href="${href(Math.max(1, first - 25), 0)}">earlier</a>` : "") +
          (last < count ? ` · <a id="rows-later" href="${href(Math.min(count, last + 26), 0)}">later</a>` : "");
      }
    }
    body.querySelectorAll("tr").forEach((tr, i) => tr.classList.toggle("current", rows[i].number === deal));
  }

  function render() {
    const d = dealOf(deal);
    const s = d.steps[step];
    const board = document.getElementById("board");
    board.dataset.deal = deal;
    board.dataset.step = step;
    board.innerHTML = B.draw(tl.seats, tl.deck, d.dealer, s, bottom);
    root.dataset.deal = deal;
    root.dataset.step = step;
    document.getElementById("counter").textContent = `deal ${deal}, step ${step} of ${lastStep(deal)}`;
    scrub.max = lastStep(deal);
    scrub.value = step;
    setLink(document.getElementById("prev"), prevOf());
    setLink(document.getElementById("next"), nextOf());
    setLink(document.getElementById("first"), [deal, 0]);
    setLink(document.getElementById("last"), [deal, lastStep(deal)]);
    setLink(document.getElementById("prev-deal"), deal > 1 ? [deal - 1, 0] : null);
    setLink(document.getElementById("next-deal"), deal < count ? [deal + 1, 0] : null);
    const input = document.getElementById("deal-input");
    if (input && document.activeElement !== input) input.value = deal;
    if (dealScrub && document.activeElement !== dealScrub) dealScrub.value = deal;
    document.querySelectorAll("nav.views a").forEach((a) => {
      const u = new URL(a.href, location.href);
      u.searchParams.set("deal", deal); u.searchParams.set("step", step);
      a.setAttribute("href", u.pathname + u.search);
    });
    renderRows();
    document.querySelectorAll(".deal-no").forEach((el) => { el.textContent = deal; });
    const rows = d.tricks.slice(0, s.tricks).map((t) => `<tr><td data-label="#">${t.no}</td><td data-label="Led by">${esc(tl.seats[t.leader])}</td>` +
      `<td data-label="Lead">${cardName(t.cards[0])}</td><td data-label="Follow">${cardName(t.cards[1])}</td><td data-label="Won by">${esc(tl.seats[t.winner])}</td><td data-label="Honours">${t.honours}</td></tr>`);
    document.querySelector("#tricks tbody").innerHTML = rows.length ? rows.join("") :
      '<tr><td colspan="6" class="muted">No trick played yet.</td></tr>';
    document.querySelectorAll(".analysis-deal").forEach((el) => {  // the solver's marks, when analysed
      el.hidden = Number(el.dataset.deal) !== deal;
      el.querySelectorAll("tr[data-play]").forEach((tr) => tr.classList.toggle("current", Number(tr.dataset.play) === step - 1));
    });
    history.replaceState(null, "", href(deal, step));
  }

  async function go(target) {  // [deal, step]; a negative step counts from the deal's end
    if (!target) return false;
    const mine = ++wanted;
    const [d, s] = target;
    if (!cache.has(d)) document.getElementById("counter").textContent = `loading deal ${d}…`;
    try {
      await load(d);
    } catch (err) {
      if (mine === wanted) document.getElementById("counter").textContent = `deal ${d} could not be loaded (${err.message})`;
      return false;
    }
    if (mine !== wanted) return false;
    deal = d;
    step = Math.max(0, Math.min(lastStep(d), s < 0 ? lastStep(d) + 1 + s : s));
    render();
    if (deal < count) load(deal + 1).catch(() => {});  // the next deal, ahead of play and →
    return true;
  }
  let busy = false;
  function setPlaying(on) {
    const button = document.getElementById("play");
    if (on && !timer) {
      timer = setInterval(async () => {
        if (busy) return;
        busy = true;
        const moved = await go(nextOf());
        busy = false;
        if (!moved) setPlaying(false);
      }, 700);
    } else if (!on && timer) {
      clearInterval(timer);
      timer = null;
    }
    button.textContent = timer ? "⏸ pause" : "▶ play";
    button.setAttribute("aria-pressed", timer ? "true" : "false");
  }

  const play = document.getElementById("play");
  play.hidden = false;
  const scrub = document.getElementById("scrub");
  scrub.hidden = false;
  const dealScrub = document.getElementById("deal-scrub");
  scrub.addEventListener("input", () => { setPlaying(false); go([deal, Number(scrub.value)]); });
  play.addEventListener("click", () => setPlaying(!timer));
  const bind = (id, target) => {
    const el = document.getElementById(id);
    if (el) el.addEventListener("click", (e) => { e.preventDefault(); setPlaying(false); go(target()); });
  };
  bind("prev", prevOf);
  bind("next", nextOf);
  bind("first", () => [deal, 0]);
  bind("last", () => [deal, lastStep(deal)]);
  bind("prev-deal", () => deal > 1 ? [deal - 1, 0] : null);
  bind("next-deal", () => deal < count ? [deal + 1, 0] : null);
  const results = document.getElementById("deal-results");
  if (results) results.addEventListener("click", (e) => {
    const a = e.target.closest(".deal-link");
    if (!a) return;
    e.preventDefault(); setPlaying(false); go([Number(a.dataset.deal), 0]);
  });
  if (dealScrub) {  // the deals of a long match on one slider: the number follows it, the deal loads on release
    dealScrub.hidden = false;
    dealScrub.addEventListener("input", () => { document.getElementById("deal-input").value = dealScrub.value; });
    dealScrub.addEventListener("change", () => { setPlaying(false); go([Number(dealScrub.value), 0]); });
  }
  const picker = document.getElementById("deal-picker");
  if (picker) picker.addEventListener("submit", (e) => {
    e.preventDefault(); setPlaying(false);
    const n = Number(document.getElementById("deal-input").value);
    if (Number.isInteger(n) && n >= 1 && n <= count) go([n, 0]);
  });
  document.addEventListener("keydown", (e) => {
    if (e.target.closest && e.target.closest("input, select, textarea")) return;
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const keys = {
      ArrowRight: nextOf, ArrowLeft: prevOf, Home: () => [deal, 0], End: () => [deal, lastStep(deal)],
      PageDown: () => deal < count ? [deal + 1, 0] : null, PageUp: () => deal > 1 ? [deal - 1, 0] : null,
    };
    if (keys[e.key]) { e.preventDefault(); setPlaying(false); go(keys[e.key]()); }
    else if (e.key === " ") { e.preventDefault(); setPlaying(!timer); }
  });
  if (deal < count) load(deal + 1).catch(() => {});  // ready for → at the deal's end and for play
})();

// The live match page: follows the match's server-sent events, redraws the card table (board.js, the
// replay viewer's drawing) from each event's `board` and adds each trick to the lists in place (no reload). The server releases a trick only once the next one is complete. When the match
// is over and revealed, the page shows whether the deck commitment checks out (the server checks it)
// and turns into the replay viewer of /matches/ID. Without JavaScript the page refreshes itself.
(function () {
  "use strict";
  const root = document.getElementById("live");
  if (!root || !window.EventSource) return;
  const id = root.dataset.match;
  const names = JSON.parse(root.dataset.names || "[]");
  const deck = root.dataset.deck;
  const tricks = document.querySelector("#live-tricks tbody");
  const deals = document.querySelector("#live-deals tbody");
  const statusTag = document.getElementById("live-status");
  const note = document.getElementById("live-note");
  const check = document.getElementById("live-verified");
  const cardName = (code) => window.ElfernBoard ? window.ElfernBoard.cardName(code, deck) : code;  // board.js
  const seat = (i) => (i === undefined || i === null || i < 0 || i >= names.length) ? "?" : names[i];
  const cell = (text, cls, label) => {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    if (label) td.dataset.label = label;  // a phone shows each row as labelled pairs (style.css)
    return td;
  };
  const boardBox = document.getElementById("live-board");
  let source = null;

  function drawBoard(state) {  // the replay viewer's table (board.js), as a spectator may see it
    if (!state || !window.ElfernBoard || !boardBox) return;
    let board = document.getElementById("board");
    if (!board) {
      board = document.createElement("section");
      board.id = "board";
      board.className = "board";
      board.setAttribute("aria-live", "polite");
      boardBox.replaceChildren(board);
    }
    board.dataset.deal = state.deal;
    board.dataset.step = state.tricks;
    board.innerHTML = window.ElfernBoard.draw(names, deck, state.dealer, state, 0);
  }

  function dealRow(n) {
    let row = deals.querySelector(`tr[data-deal="${n}"]`);
    if (!row) {
      row = document.createElement("tr");
      row.className = "live-deal";
      row.dataset.deal = n;
      row.append(cell(String(n), "", "Deal"), cell("?", "", "Dealer"), cell("playing", "winner muted", "Winner"),
        cell("", "score", "Lines"));
      deals.append(row);
    }
    return row;
  }

  function clear() {  // the match restarted (a worker broke down): its new attempt starts at deal 1
    tricks.replaceChildren();
    deals.replaceChildren();
    if (boardBox) boardBox.replaceChildren();
  }

  function onStatus(data) {
    const m = data.match;
    statusTag.textContent = m.status;
    if (data.restart) clear();
    if (m.status === "queued") note.textContent = "Waiting for a worker: the table fills in once it plays.";
    else if (m.status === "running") note.textContent = "Each trick is shown once the next one is complete (one full trick behind the play).";
    else if (m.status === "failed") note.textContent = "The match could not be played to its end.";
    else if (!m.revealed) note.textContent = "The match is over; its duplicate twin deals the same cards and is not over yet: its tricks are shown once both matches are.";
    if (data.verified !== null && data.verified !== undefined) {
      check.replaceChildren();
      check.append(" · seed ", code(m.seed), " · salt ", code(m.salt), " · ");
      const b = document.createElement("b");
      b.className = data.verified ? "up" : "down";
      b.textContent = data.verified ? "commitment verified" : "commitment does NOT match";
      check.append(b);
    }
  }

  function code(text) {
    const c = document.createElement("code");
    c.textContent = String(text);
    return c;
  }

  function onTrick(t, ident) {
    if (tricks.querySelector(`tr[data-id="${ident}"]`)) return;
    const row = document.createElement("tr");
    row.className = "live-trick";
    row.dataset.id = ident;
    row.append(cell(String(t.deal), "", "Deal"), cell(String(t.trick), "", "#"), cell(seat(t.leader), "", "Led by"),
      cell(cardName(t.cards[0]), "card-name", "Lead"), cell(cardName(t.cards[1]), "card-name", "Follow"),
      cell(seat(t.winner), "", "Won by"), cell((t.tricks_won || [0, 0]).join("–"), "", "Tricks"));
    row.children[3].dataset.card = t.cards[0];
    row.children[4].dataset.card = t.cards[1];
    tricks.append(row);
  }

  const keep = Number(root.dataset.trickDeals || 5);
  function onDeal(d) {
    dealRow(d.deal).children[1].textContent = seat(d.dealer);
    tricks.querySelectorAll("tr.live-trick").forEach((tr) => {  // the newest deals' tricks only
      if (Number(tr.dataset.id.split(".")[0]) <= d.deal - keep) tr.remove();
    });
  }

  function onDealEnd(d) {
    const row = dealRow(d.deal);
    if (d.winner < 0 && window.ElfernBoard) row.children[2].innerHTML = window.ElfernBoard.STAENDER;
    else row.children[2].textContent = d.winner < 0 ? "Ständer" : seat(d.winner);
    row.children[2].className = "winner";
    row.children[3].textContent = (d.lines || []).join("–");
  }

  async function toViewer(url) {  // swap the page for the replay viewer, keeping the commitment check
    try {
      const res = await fetch(url, { headers: { Accept: "text/html" } });
      if (!res.ok) return;
      const doc = new DOMParser().parseFromString(await res.text(), "text/html");
      const main = document.querySelector("main");
      const fresh = doc.querySelector("main");
      if (!main || !fresh) return;
      const banner = document.createElement("p");
      banner.id = "live-ended";
      banner.className = "muted";
      banner.append("Watched live; the match is over. ", check.cloneNode(true));
      main.replaceChildren(banner, ...fresh.childNodes);
      document.title = doc.title;
      history.replaceState(null, "", url);
      const script = document.createElement("script");
      script.src = "/static/viewer.js";
      document.body.append(script);
    } catch (e) {
      note.textContent = "The match is over: open the replay viewer at " + url;
    }
  }

  function follow() {
    const after = root.dataset.last ? `?after=${encodeURIComponent(root.dataset.last)}` : "";
    source = new EventSource(`/api/matches/${id}/events${after}`);
    const on = (kind, fn) => source.addEventListener(kind, (e) => {
      const data = JSON.parse(e.data);
      fn(data, e.lastEventId);
      if (data.board) drawBoard(data.board);
    });
    on("status", onStatus);
    on("deal", onDeal);
    on("trick", onTrick);
    on("deal_end", onDealEnd);
    on("end", (data) => {
      source.close();
      if (data.viewer) toViewer(data.viewer);
      else if (!data.final) setTimeout(follow, 5000);  // an idle stream ended: look again
    });
    source.onerror = () => {  // EventSource retries by itself; a refusal (e.g. 429) closes it
      if (source.readyState === EventSource.CLOSED) {
        note.textContent = "Live updates stopped (too many open streams?): reload the page to follow again.";
      }
    };
    on("refused", (data) => {
      source.close();
      note.textContent = data.detail;
    });
  }

  if (root.dataset.final === "true" && root.dataset.viewer) toViewer(root.dataset.viewer);
  else follow();
})();

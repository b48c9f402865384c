// The card table, drawn in the browser: one implementation for the replay viewer (viewer.js) and the
// live page (live.js). `ElfernBoard.draw(seats, deck, dealer, s, bottom)` returns the markup of
// `templates/_board.html` for one step `s` (the step format of arena/web/timeline.py, which
// arena/replay/live_board.py also writes); a hand that is null is drawn as backs.
(function () {
  "use strict";
  const GLYPH = { C: "♣", D: "♦", H: "♥", S: "♠" };
  const GERMAN_SUIT = { C: "Eichel", D: "Schellen", H: "Herz", S: "Grün" };
  const GERMAN_RANK = { 7: "7", 8: "8", 9: "9", T: "10", J: "Unter", Q: "Ober", K: "König", A: "Daus" };
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const cardName = (code, deck) => deck === "german"
    ? GERMAN_SUIT[code[1]] + " " + GERMAN_RANK[code[0]]
    : GLYPH[code[1]] + (code[0] === "T" ? "10" : code[0]);
  const card = (code, deck, css = "card") => code
    ? `<svg class="${css}" viewBox="0 0 60 84" data-card="${code}" role="img" aria-label="${cardName(code, deck)}"><title>${cardName(code, deck)}</title><use href="#card-${code}"/></svg>`
    : `<svg class="card back" viewBox="0 0 60 84" role="img" aria-label="hidden card"><use href="#card-back"/></svg>`;
  const HONOURS = '<a class="term" href="/rules#honours" title="A, K, Q, J and 10 count 1 each; 11 of the 20 win the deal">honours</a>';
  const LINES = '<a class="term" href="/rules#lines" title="points of the match: a won deal scores 1 to 3 lines; 4 lines make a flag">lines</a>';

  function seatHtml(seats, deck, dealer, seat, s, bottom) {
    const fresh = s.drew.filter((dr) => dr.seat === seat).map((dr) => dr.card);
    const hand = s.hands[seat] !== null
      ? s.hands[seat].map((c) => card(c, deck, fresh.includes(c) ? "card drawn"
        : s.legal && seat === s.to_move && !s.legal.includes(c) ? "card illegal" : "card")).join("")
      : card(null, deck).repeat(s.counts[seat]);
    return `<div class="seat ${seat === bottom ? "bottom" : "top"}" data-seat="${seat}">` +
      `<div class="seat-info"><b>${esc(seats[seat])}</b> <span class="muted">seat ${seat}${dealer === seat ? " · dealer" : ""}</span>` +
      ` · ${HONOURS} <b class="honours">${s.honours[seat]}</b> · ${LINES} <span class="lines">${s.lines[seat]}</span>` +
      (s.to_move === seat ? ' <span class="tag to-move">to move</span>' : "") + "</div>" +
      `<div class="hand" data-seat="${seat}" data-count="${s.counts[seat]}">${hand}</div></div>`;
  }

  function middleHtml(seats, deck, s) {
    const trick = s.table.map((t) => `<figure class="played${s.trick_winner === t.seat ? " won" : ""}" data-seat="${t.seat}">` +
      `${card(t.card, deck)}<figcaption>${esc(seats[t.seat])}</figcaption></figure>`).join("");
    const drew = s.drew.map((dr) => ` ${esc(seats[dr.seat])} draws ${dr.card ? cardName(dr.card, deck) : "a card"}.`).join("");
    return `<div class="middle"><div class="stock" data-count="${s.stock}">${s.stock ? card(null, deck) : ""}` +
      `<span><b class="stock-count">${s.stock}</b> in stock</span>` +
      (s.trump ? `<span class="trump">trump ${card(s.trump, deck)}</span>` : "") + "</div>" +
      `<div class="trick" data-winner="${s.trick_winner === null ? "" : s.trick_winner}">${trick}</div>` +
      `<p class="note">${esc(s.note)}${drew}</p></div>`;
  }

  function draw(seats, deck, dealer, s, bottom) {
    return seatHtml(seats, deck, dealer, 1 - bottom, s, bottom) + middleHtml(seats, deck, s) +
      seatHtml(seats, deck, dealer, bottom, s, bottom);
  }

  const STAENDER = '<a class="term" href="/rules#staender" title="a 10–10 deal: nobody scores it; the next won deal counts double">Ständer</a>';
  window.ElfernBoard = { draw, cardName, esc, STAENDER };
})();

// livemon's web pages (overlay.html, commentator.html): the WebSocket client and what they draw alike.
// Protocol: docs/websocket.md. No external files: the board is the vendored chessground (vendor/chessground/).
"use strict";
import { Chessground } from "./vendor/chessground/chessground.min.js";
import { flagOf } from "./federations.js";

export const PROTOCOL = 1;
export const $ = (id) => document.getElementById(id);
export const DASH = "—";  // a figure that is not there (no evaluation yet, no rating): never 0 or 100
export const byId = new Intl.Collator("en", { numeric: true }).compare;  // "b2" before "b10"
const present = (x) => x !== null && x !== undefined && !(typeof x === "number" && Number.isNaN(x));

// -- numbers -----------------------------------------------------------------------------------------------

/** White's winning chances in percent from an evaluation in centipawns, White's view (lichess's curve; cp
 *  clamped to ±1000, a mate as ±1000); null for no evaluation. */
export function winPct(cp) {
  if (!present(cp)) return null;
  const c = Math.max(-1000, Math.min(1000, cp));
  return 50 + 50 * (2 / (1 + Math.exp(-0.00368208 * c)) - 1);
}

/** White's win% after each ply (index 0: the start): the board's own series when it sends one, else from its
 *  evaluations. */
export function winSeries(b) {
  const sent = b && b.win_percents;
  if (Array.isArray(sent)) return sent.map((w) => (present(w) ? w : null));
  return ((b && b.evals) || []).map(winPct);
}

const CLASSES = ["inaccuracy", "mistake", "blunder"];
/** The class of each ply's move (index = ply; null: none or unknown): the board's own when it sends them, else
 *  from the drop in the mover's winning chances (lichess: 0.1, 0.2, 0.3 on the -1..1 scale). */
export function moveClasses(b, wins) {
  const sent = b && b.move_classes;  // the server's: one a ply, from ply 1
  if (Array.isArray(sent)) return [null].concat(sent.map((c) => (CLASSES.includes(c) ? c : null)));
  const out = [null];
  for (let ply = 1; ply < wins.length; ply++) {
    const before = wins[ply - 1], after = wins[ply];
    if (before === null || after === null) { out.push(null); continue; }
    const drop = (ply % 2 ? before - after : after - before) / 50;  // percent points -> chances (-1..1)
    out.push(drop >= 0.3 ? "blunder" : drop >= 0.2 ? "mistake" : drop >= 0.1 ? "inaccuracy" : null);
  }
  return out;
}
export const CLASS_MARK = { inaccuracy: "?!", mistake: "?", blunder: "??" };

export const fmtInt = (x) => (present(x) ? String(Math.round(x)) : DASH);
export const fmtPct = (x, digits = 0) => (present(x) ? Number(x).toFixed(digits) : DASH);
/** A 95% range "2627–2790"; an end cut at the rating range the model was fitted on (``open``: "low", "high",
 *  "both", from the display rules) is marked: "≤1409–1800", "2627–2865+" (the true end lies beyond it). */
export function fmtRange(r, open) {
  if (!r || !present(r[0]) || !present(r[1])) return "";
  const lo = open === "low" || open === "both", hi = open === "high" || open === "both";
  return (lo ? "≤" : "") + Math.round(r[0]) + "–" + Math.round(r[1]) + (hi ? "+" : "");
}
const MATE_CP = 3900;  // a mate's evaluation (livemon.rating.evaluation.MATE_CP)
/** An evaluation for the screen, White's view: "+0.3", "−2.5", "0.0" (never "−0.0"); a mate "#3" (White mates in
 *  3) or "#-2" (Black mates in 2) when its distance ``mate`` (White's view) is sent, "#" once mate is on the board,
 *  else "+#" / "−#" (a mate, its distance unknown); "—" for none. */
export function fmtEval(cp, mate, mated = false) {
  if (present(mate) && mate !== 0) return "#" + (mate > 0 ? "" : "-") + Math.abs(Math.round(mate));
  if (!present(cp)) return DASH;
  if (Math.abs(cp) >= MATE_CP) return mated || mate === 0 ? "#" : (cp > 0 ? "+" : "−") + "#";
  const s = (Math.abs(cp) / 100).toFixed(1);
  return (s === "0.0" ? "" : cp > 0 ? "+" : "−") + s;
}
/** A board's current evaluation as :func:`fmtEval` writes it (its mate distance when sent, "#" after mate). */
export const boardEval = (b) => fmtEval(b && b.eval_cp, b && (present(b.eval_mate) ? b.eval_mate : b.mate),
  !!(b && /#$/.test(b.last_move_san || "")));
export function fmtScore(x) {  // 2.5 -> "2½"
  if (!present(x)) return DASH;
  const whole = Math.floor(x), half = x - whole >= 0.5;
  return (whole || !half ? String(whole) : "") + (half ? "½" : "");
}
/** A game's result as the screens write it: "1-0", "0-1", "½-½"; "" while it is played. */
export const fmtResult = (r) => (!r || r === "*" ? "" : String(r).replace(/1\/2/g, "½"));
/** A signed change, one decimal: "+4.2", "−3.0", "0.0". */
export function fmtSigned(x) {
  if (!present(x)) return DASH;
  const r = Math.round(x * 10) / 10;
  return (r > 0 ? "+" : r < 0 ? "−" : "") + Math.abs(r).toFixed(1);
}
/** How many of a side's moves a figure reads when that is fewer than were played: "28 of 41 moves", else "".
 *  ``o`` is a board (``moves_read: {white: {played, judged, accuracy_read}, black: …}``) or a player
 *  (``moves_read: {played, judged, accuracy_read}``); ``what`` is the count the figure reads (``accuracy_read``:
 *  accuracy, ``judged``: the classes and estimates). A plain count with ``moves_played`` beside it is read too. */
export function reads(o, side, what = "accuracy_read") {
  if (!o) return "";
  let v = o.moves_read, r, n;
  if (v && typeof v === "object" && side && v[side] !== undefined && !("played" in v)) v = v[side];
  if (v && typeof v === "object" && "played" in v) {
    r = present(v[what]) ? v[what] : v.judged;
    n = v.played;
  } else {
    const pick = (x) => (x && typeof x === "object" ? x[side] : x);
    r = pick(v); n = pick(o.moves_played);
  }
  return present(r) && present(n) && r < n ? `${r} of ${n} moves` : "";
}
export function fmtClock(s) {
  if (!present(s)) return "";
  const t = Math.max(0, s);
  if (t < 10) return "0:0" + t.toFixed(1);
  const h = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), sec = Math.floor(t % 60);
  const pad = (n) => String(n).padStart(2, "0");
  return h ? h + ":" + pad(m) + ":" + pad(sec) : m + ":" + pad(sec);
}
/** Sets ``el``'s text only when it differs: the same text set again would still cost the page a layout and a
 *  paint (a clock ticks ten times a second and its text changes once). */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

export function moveLabel(ply, san) {  // ply 5, "Nc6" -> "3. Nc6"; ply 6 -> "3… Nc6"
  return san ? Math.ceil(ply / 2) + (ply % 2 ? ". " : "… ") + san : "";
}
export const live = (b) => b && b.result === "*";
export const toMove = (b) => (b && b.fen && b.fen.split(" ")[1] === "b" ? "black" : "white");

/** A title and federation from the board's PGN tags when it sends them ("GM", "NOR"); "" when not. */
export const titleOf = (b, side) => (b && (b[side + "_title"] || "")) || "";
export const fedOf = (b, side) => (b && (b[side + "_fed"] || b[side + "_federation"] || "")) || "";
export { flagOf };
/** Whether this browser draws a flag emoji as one flag (not two letters or boxes): measured once on a canvas. */
export function flagsDrawn() {
  if (flagsDrawn.known === undefined) {
    try {
      const ctx = document.createElement("canvas").getContext("2d");
      ctx.font = "32px sans-serif";
      const one = ctx.measureText("\u{1F1F3}").width, flag = ctx.measureText("\u{1F1F3}\u{1F1F4}").width;
      flagsDrawn.known = flag > 0 && flag < one * 1.5;
    } catch (e) { flagsDrawn.known = false; }
  }
  return flagsDrawn.known;
}
/** A federation as the pages show it: its flag (when this browser draws flags) and its code. */
export function fedLabel(fed) {
  const f = flagOf(fed);
  return (f && flagsDrawn() ? f + " " : "") + (fed || "");
}

/** The round and board of a game from its Round tag ("5.12": round 5, board 12, as lichess's broadcasts write
 *  it): ``{round, board}``, ``board`` null when the tag names none, ``round`` "" when there is none. */
export function roundBoard(b) {
  const r = String((b && b.round) || "").trim();
  if (!r || r === "?" || r === "-") return { round: "", board: present(b && b.board) ? Number(b.board) : null };
  const m = /^(\d+)\.(\d+)$/.exec(r);
  if (m) return { round: m[1], board: Number(m[2]) };
  return { round: r, board: present(b && b.board) ? Number(b.board) : null };
}
/** A game's event for grouping: its Event tag, "" when none; a lichess chapter name ("Round 3: A - B", one a
 *  game) names no event of its own. */
export function eventOf(b) {
  const e = String((b && b.event) || "").trim();
  return !e || e === "?" || /^Round\s+[\d.]+\s*:/i.test(e) ? "" : e;
}
/** Boards by board number (from the Round tag), then game id. */
export function byBoard(a, b) {
  const x = roundBoard(a).board, y = roundBoard(b).board;
  if (x !== null && y !== null && x !== y) return x - y;
  if (x !== null && y === null) return -1;
  if (x === null && y !== null) return 1;
  return byId(a.game_id, b.game_id);
}

// -- clocks that tick between moves --------------------------------------------------------------------------

const anchors = new Map();  // game id -> {ply, white, black, at}: when the clocks last changed (Unix s)
/** The clocks now: the side to move's runs down from the time its board message was published, until the next
 *  move; a finished game's and an unknown clock stand still. */
export function clocks(b) {
  const now = Date.now() / 1000;
  let a = anchors.get(b.game_id);
  if (!a || a.ply !== b.ply || a.white !== b.white_clock || a.black !== b.black_clock) {
    a = { ply: b.ply, white: b.white_clock, black: b.black_clock, at: Math.min(now, present(b.ts) ? b.ts : now) };
    anchors.set(b.game_id, a);
  }
  const out = { white: b.white_clock, black: b.black_clock, running: null };
  if (live(b) && b.ply > 0) {
    const side = toMove(b);
    if (present(out[side])) { out[side] = out[side] - (now - a.at); out.running = side; }
  }
  return out;
}

// -- the connection -------------------------------------------------------------------------------------------

/** One WebSocket connection with the page's state: boards, players, moments, withdrawn games. It reconnects
 *  by itself (0.5 s doubling to 10 s, with jitter), asks for batched deltas and patches, and recovers gaps with a
 *  snapshot. ``want()`` returns the channels the page needs now; call ``sync()`` when that changes. */
export class Feed {
  constructor(want, onchange) {
    this.want = want;
    this.onchange = onchange;
    this.boards = new Map(); this.players = new Map(); this.moments = new Map();
    this.forecasts = new Map();  // event -> its latest ``forecast`` message
    this.withdrawn = new Map();  // id -> {reason, board}
    this.touched = new Map(); this.clock = 0;
    this.last = 0; this.connected = false; this.batches = 0; this.patches = 0;
    this.subscribed = []; this.offered = [];  // channels held; the hello's channel list
    this.refused = new Set();  // channels the server said no to (a server without ``moments``)
    this.errors = [];
    this.ws = null; this.backoff = 500;
    this.connect();
  }

  connect() {
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
    const ws = this.ws = new WebSocket(url);
    ws.onopen = () => { this.subscribed = []; };
    ws.onmessage = (ev) => {
      try { this.handle(JSON.parse(ev.data)); } catch (e) { console.error(e); }
    };
    ws.onclose = () => {
      this.connected = false;
      this.onchange("closed");
      setTimeout(() => this.connect(), this.backoff + Math.random() * 250);
      this.backoff = Math.min(this.backoff * 2, 10000);
    };
  }

  /** Whether to ask for ``channel``: not once the server refused it (``moments`` is newer than the protocol's
   *  first version: a server without it answers ``unknown_channel``, and the page goes on without it). */
  serves(channel) { return !this.refused.has(channel); }

  sync() {
    if (!this.ws || this.ws.readyState !== 1 || !this.connected) return;
    const want = [...new Set(this.want())].filter((c) => this.serves(c));
    const gone = this.subscribed.filter((c) => !want.includes(c));
    const added = want.filter((c) => !this.subscribed.includes(c));
    if (gone.length) this.ws.send(JSON.stringify({ op: "unsubscribe", channels: gone }));
    if (added.length) this.ws.send(JSON.stringify({ op: "subscribe", channels: added, batch: true, patch: true }));
    for (const c of gone) {
      if (c.startsWith("player:")) this.players.delete(c.slice(7));
    }
    this.subscribed = want;
  }

  resync() { if (this.ws && this.ws.readyState === 1) this.ws.send(JSON.stringify({ op: "snapshot" })); }

  merged(held, m) {  // a patch carries what changed in the state held of its key
    if (!m.patch) return m;
    if (!held) return null;  // none held: a gap (its resync brings it whole)
    const out = Object.assign({}, held, m);
    delete out.patch; this.patches++;
    return out;
  }

  apply(m) {
    if (m.kind === "board") {
      const old = this.boards.get(m.game_id);
      const b = this.merged(old, m);
      if (!b) return;
      if (old && !("evals" in m) && old.ply === b.ply && old.evals) b.evals = old.evals;  // a games-channel board
      if (old && !("moves" in m) && Array.isArray(old.moves)) {  // the game's move list, held to this board's ply
        b.moves = old.moves.slice(0, b.ply);
        if (Array.isArray(old.moves_uci)) b.moves_uci = old.moves_uci.slice(0, b.ply);
      }
      b._sans = (old && old._sans) || [];  // the moves seen, for the move list (a board carries its last one)
      if (b.last_move_san && b.ply > 0) b._sans[b.ply] = b.last_move_san;
      this.boards.set(m.game_id, b); this.touched.set(m.game_id, ++this.clock); this.withdrawn.delete(m.game_id);
    } else if (m.kind === "player") {
      const p = this.merged(this.players.get(m.name), m);
      if (p) this.players.set(m.name, p);
    } else if (m.kind === "board_removed") {
      const last = this.boards.get(m.game_id) || (this.withdrawn.get(m.game_id) || {}).board;
      this.withdrawn.set(m.game_id, { reason: m.reason, board: last });
      this.boards.delete(m.game_id); this.touched.delete(m.game_id);
    } else if (m.kind === "player_removed") {
      this.players.delete(m.name);
    } else if (m.kind === "moment") {
      // the page's own names for a moment's fields (``game``, ``move``, ``class``, ``best``)
      const one = { ...m, game: m.game_id, move: m.move_san, class: m.move_class, best: m.best_move_san };
      const key = one.game + "|" + one.ply;
      const held = this.merged(this.moments.get(key), one);
      if (held) this.moments.set(key, held);
    } else if (m.kind === "moment_removed") {
      this.moments.delete(m.game_id + "|" + m.ply);
    } else if (m.kind === "forecast") {
      const held = this.merged(this.forecasts.get(m.event), m);
      if (held) this.forecasts.set(m.event, held);
    }
  }

  handle(f) {
    if (f.type === "hello") {
      if (f.protocol !== PROTOCOL) console.warn("livemon: server protocol", f.protocol, "page", PROTOCOL);
      this.backoff = 500; this.connected = true; this.offered = f.channels || [];
      this.sync();
    } else if (f.type === "snapshot") {
      const ch = f.channel;
      if (ch === "games") {  // the round's boards: those not in it are gone (what is held of the others is kept)
        const ids = new Set(f.messages.map((m) => m.game_id));
        for (const id of [...this.boards.keys()]) if (!ids.has(id)) { this.boards.delete(id); this.touched.delete(id); }
      } else if (ch === "players") this.players.clear();
      else if (ch.startsWith("player:")) this.players.delete(ch.slice(7));
      else if (ch === "moments") this.moments.clear();
      else if (ch === "forecast") this.forecasts.clear();
      f.messages.forEach((m) => this.apply(m));
      this.last = f.seq;
    } else if (f.type === "delta") {
      if (f.prev !== this.last) this.resync();
      this.apply(f.message);
      this.last = f.seq;
    } else if (f.type === "deltas") {
      if (f.prev !== this.last) this.resync();
      f.items.forEach((it) => this.apply(it.message));
      this.last = f.seq; this.batches++;
    } else if (f.type === "heartbeat") {
      if (f.last !== this.last) this.resync();
    } else if (f.type === "error") {  // e.g. a server without the moments channel: go on without it
      this.errors.push(f.code + (f.channel ? " " + f.channel : ""));
      if (f.channel && ["unknown_channel", "forbidden"].includes(f.code)) {
        this.refused.add(f.channel);
        this.subscribed = this.subscribed.filter((c) => c !== f.channel);
      }
      console.warn("livemon:", f.code, f.message);
    }
    this.onchange(f.type);  // the page draws (and sets body's data-seq to what it drew)
  }
}

// -- drawing --------------------------------------------------------------------------------------------------

/** A chessground board in ``el`` (view only), updated in place; ``coords`` shows the files and ranks. */
export function board(el, coords = false) {
  let cg = null, shown = null;
  return (b) => {
    const fen = b ? b.fen : "8/8/8/8/8/8/8/8 w - - 0 1";
    const key = fen + (b && b.last_move_uci);
    if (key === shown) return;
    shown = key;
    const uci = b && b.last_move_uci;
    const inCheck = b && /[+#]$/.test(b.last_move_san || "");
    const position = { fen: fen.split(" ")[0], lastMove: uci ? [uci.slice(0, 2), uci.slice(2, 4)] : undefined,
                       check: inCheck ? toMove(b) : false, turnColor: toMove(b) };
    if (!cg) {  // made with its first position: no animation from the start position
      cg = Chessground(el, {
        ...position, viewOnly: true, coordinates: coords, animation: { enabled: true, duration: 180 },
        drawable: { enabled: false, visible: false }, highlight: { lastMove: true, check: true },
      });
    } else cg.set(position);
    el.dataset.fen = fen;
  };
}

/** The eval bar: White's share by win% (none: the bar at half, dimmed, and "—"). ``el`` holds
 *  ``.fill`` and ``.txt``; ``horizontal`` fills from the left. */
export function evalBar(el, cp, horizontal = false, mate = null, mated = false) {
  const w = winPct(cp);
  const share = w === null ? 50 : w;
  const fill = el.querySelector(".fill"), txt = el.querySelector(".txt");
  el.classList.toggle("horizontal", horizontal); el.classList.toggle("vertical", !horizontal);
  fill.style[horizontal ? "width" : "height"] = share.toFixed(1) + "%";
  el.dataset.white = share.toFixed(1);
  el.classList.toggle("unknown", w === null);
  txt.textContent = fmtEval(cp, mate, mated);
  txt.classList.toggle("black", w !== null && w < 50);  // written on the side that is ahead
}

const SVG = "http://www.w3.org/2000/svg";
const CLASS_COLOR = { inaccuracy: "#56b4e9", mistake: "#e69f00", blunder: "#df5353" };
/** White's win% after each ply as an area chart (White's share from the bottom, as the eval bar) in the <svg> ``el`` (viewBox W × H), the classified moves as
 *  dots, ``marker`` (a ply) as a vertical line; plies without an evaluation leave a gap. The axes are guides, not
 *  text (the chart is stretched to its panel): 50% dashed, 25% and 75% faint, a faint line every ten moves. */
export function winChart(el, wins, classes, opts = {}) {
  const W = opts.width || el.clientWidth || 600, H = opts.height || el.clientHeight || 120, n = Math.max(wins.length - 1, opts.minPlies || 60);
  const x = (i) => (i / n) * W, y = (w) => H - (w / 100) * H;
  const parts = [];
  let run = [];
  const flush = () => {
    if (run.length > 1) {
      const line = run.map(([i, w]) => x(i).toFixed(1) + "," + y(w).toFixed(1)).join(" L");
      parts.push(`<path class="area" d="M${x(run[0][0]).toFixed(1)},${H} L${line} L${x(run[run.length - 1][0]).toFixed(1)},${H} Z"/>`);
      parts.push(`<path class="line" d="M${line}"/>`);
    } else if (run.length === 1) {
      parts.push(`<circle class="line" cx="${x(run[0][0]).toFixed(1)}" cy="${y(run[0][1]).toFixed(1)}" r="2"/>`);
    }
    run = [];
  };
  wins.forEach((w, i) => { if (w === null) flush(); else run.push([i, w]); });
  flush();
  const dots = (classes || []).map((c, i) => (c && wins[i] !== null && wins[i] !== undefined
    ? `<circle class="dot ${c}" cx="${x(i).toFixed(1)}" cy="${y(wins[i]).toFixed(1)}" r="${c === "blunder" ? 6 : 4.5}" fill="${CLASS_COLOR[c]}"><title>${moveLabel(i, "")}${c}</title></circle>`
    : "")).join("");
  const mark = present(opts.marker) ? `<line class="marker" x1="${x(opts.marker)}" x2="${x(opts.marker)}" y1="0" y2="${H}"/>` : "";
  el.setAttribute("viewBox", `0 0 ${W} ${H}`);
  el.setAttribute("preserveAspectRatio", "none");
  const grid = [25, 75].map((w) => `<line class="grid" x1="0" x2="${W}" y1="${y(w)}" y2="${y(w)}"/>`);
  for (let ply = 20; ply < n; ply += 20) grid.push(`<line class="grid" x1="${x(ply).toFixed(1)}" x2="${x(ply).toFixed(1)}" y1="0" y2="${H}"/>`);
  el.innerHTML = `<rect class="bg" x="0" y="0" width="${W}" height="${H}"/>${grid.join("")}<line class="mid" x1="0" x2="${W}" y1="${H / 2}" y2="${H / 2}"/>` +
    parts.join("") + mark + dots;
  el.dataset.guides = String(grid.length);
  el.dataset.points = String(wins.filter((w) => w !== null).length);
  el.dataset.last = wins.length && wins[wins.length - 1] !== null ? wins[wins.length - 1].toFixed(1) : "";
}

/** The headline estimate a screen may show (``estimate``: in this field, the moves and results with the other players'
 *  ratings of the event as the prior, once there is one, else the moves alone), by the monitor's display rules
 *  (``display``: no figure while its interval is wider than ``[display] max_interval_width`` or the rating range the
 *  model was fitted on, never an interval past that range): ``{elo, cr95, why, more}``, ``elo`` null with ``why``
 *  (the reason) and ``more`` ("n more games", or "") when it is not to be shown. An older monitor without the
 *  ``estimate`` block: its ``performance`` block, under the same rules. */
export function shownEstimate(p) {
  const est = p && (p.estimate || p.performance);
  return shownBlock(est, p && p.display);
}

/** The estimate from the moves alone a screen may show beside the headline (``moves_estimate``: no results, no
 *  prior, the figure to compare players of different events), by its own display rules (``moves_estimate.display``). */
export function shownAlone(p) {
  const m = p && p.moves_estimate;
  return shownBlock(m, m && m.display);
}

/** "1 more game", "4 more games": how long until an estimate is shown. */
export function moreGames(n) {
  return n === 1 ? "1 more game" : `${n} more games`;
}

function shownBlock(est, d) {
  if (!est || !present(est.elo)) {
    const more = d && d.more_games ? moreGames(d.more_games) : "";
    return { elo: null, cr95: null, why: (est && est.reason) || (d && d.reason) || more, more };
  }
  if (!d) return { elo: est.elo, cr95: est.cr95, why: "", more: "", open: "" };
  if (!d.show) {
    const more = d.more_games ? moreGames(d.more_games) : "";
    return { elo: null, cr95: null, why: more || d.reason || "", more };
  }
  return { elo: present(d.elo) ? d.elo : est.elo, cr95: d.cr95 || est.cr95, why: "", more: "", open: d.open || "" };
}

/** The position after each ply (index 0: the start) as FENs chessground reads ("<placement> <side>"), from the
 *  board's ``moves_uci`` played from the standard start; null when the board sends no moves or they do not lead to
 *  its position (a game from another start). */
export function positions(b) {
  const ucis = b && b.moves_uci;
  if (!Array.isArray(ucis) || !b.fen) return null;
  const sq = new Array(64).fill("");
  "RNBQKBNR".split("").forEach((p, f) => { sq[f] = p; sq[8 + f] = "P"; sq[48 + f] = "p"; sq[56 + f] = p.toLowerCase(); });
  const at = (s) => (s.charCodeAt(1) - 49) * 8 + (s.charCodeAt(0) - 97);
  const fen = (n) => {
    const ranks = [];
    for (let r = 7; r >= 0; r--) {
      let row = "", empty = 0;
      for (let f = 0; f < 8; f++) {
        const p = sq[r * 8 + f];
        if (!p) { empty++; continue; }
        if (empty) { row += empty; empty = 0; }
        row += p;
      }
      ranks.push(row + (empty ? empty : ""));
    }
    return ranks.join("/") + " " + (n % 2 ? "b" : "w");
  };
  const out = [fen(0)];
  for (let i = 0; i < ucis.length; i++) {
    const u = ucis[i], from = at(u.slice(0, 2)), to = at(u.slice(2, 4));
    let piece = sq[from];
    if (!piece || from < 0 || to < 0 || from > 63 || to > 63) return null;
    const kind = piece.toLowerCase(), df = (to % 8) - (from % 8);
    if (kind === "k" && Math.abs(df) === 2) {  // castling: the rook jumps over
      const rank = from - (from % 8), rookFrom = rank + (df > 0 ? 7 : 0), rookTo = rank + (df > 0 ? 5 : 3);
      sq[rookTo] = sq[rookFrom]; sq[rookFrom] = "";
    }
    if (kind === "p" && df !== 0 && !sq[to]) sq[(from - (from % 8)) + (to % 8)] = "";  // en passant
    if (u.length > 4) piece = piece === "P" ? u[4].toUpperCase() : u[4].toLowerCase();
    sq[to] = piece; sq[from] = "";
    out.push(fen(i + 1));
  }
  return out[out.length - 1].split(" ")[0] === b.fen.split(" ")[0] ? out : null;
}

/** Shrink ``el``'s font (from its stylesheet size, a pixel at a time, down to ``min`` px) until its text fits its box
 *  (``scrollWidth`` ≤ ``clientWidth`` and the same for height): a long name or event on air is smaller, never cut.
 *  ``el`` is a block or flex item with ``overflow: hidden``; measured again only when its text or width changed. */
export function fit(el, min = 12) {
  if (!el || !el.isConnected || el.clientWidth === 0) return;  // not laid out (yet)
  const key = el.textContent + "|" + el.clientWidth + "|" + el.clientHeight;
  if (el.dataset.fitted === key) return;
  el.style.fontSize = "";
  let size = parseFloat(getComputedStyle(el).fontSize);
  while ((el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight) && size > min) {
    size -= 1;
    el.style.fontSize = size + "px";
  }
  el.dataset.fitted = el.textContent + "|" + el.clientWidth + "|" + el.clientHeight;
}

/** The old name of :func:`shownEstimate`. */
export const shownPerf = shownEstimate;

/** A player's results ({score, games, tpr, rating_change}) when the server sends them; null when not. */
export const results = (p) => (p && p.results) || null;
/** A player's event accuracy (0-100), null when not sent or not known yet. */
export const accuracy = (p) => (p && present(p.accuracy) ? p.accuracy : null);
/** A game's accuracy for one side, null when not known. */
export const gameAccuracy = (b, side) => (b && b.accuracy && present(b.accuracy[side]) ? b.accuracy[side] : null);

/** The leaderboard's order: score (from results), then the moves estimate (shown or not), then name. */
export function ranked(players) {
  const perf = (p) => { const e = p.estimate || p.performance; return e && present(e.elo) ? e.elo : -Infinity; };
  const score = (p) => (present(p.points) ? p.points : results(p) && present(results(p).score) ? results(p).score : -Infinity);
  return [...players].sort((a, b) => score(b) - score(a) || perf(b) - perf(a) || byId(a.name, b.name));
}

/** An event's standings: its players (their player messages) and the players its forecast counts who have none
 *  yet (a listed player resting in round 1 of a round robin: the forecast's score, its listed title, federation
 *  and rating; ``listed`` set). Where the event scores otherwise than 1-½-0 (``[event] points``, such as 3-1-0),
 *  each player carries ``points``, the event's points (the forecast's, else the player's ``results.points``: a
 *  standings without a forecast ranks by them too), and is ranked by them. */
export function standing(players, forecast) {
  const have = new Set(players.map((p) => p.name));
  const rows = forecast && Array.isArray(forecast.players) ? forecast.players.filter((f) => f && f.name) : [];
  const other = otherPoints(forecast);
  const resting = rows.filter((f) => !have.has(f.name))
    .map((f) => ({ name: f.name, elo: f.rating || null, title: f.title || "", fed: f.fed || "", listed: true,
      results: { score: !other && present(f.score) ? f.score : 0, games: 0, tpr: null, rating_change: null } }));
  const all = [...players, ...resting];
  const own = (p) => (results(p) && present(results(p).points) ? results(p).points : null);
  const points = new Map(other ? rows.map((f) => [f.name, f.score]) : []);
  return all.map((p) => {
    const pts = present(points.get(p.name)) ? points.get(p.name) : own(p);
    return pts === null ? p : { ...p, points: pts };
  });
}
/** What a forecast's event gives a win, a draw and a loss when it is not FIDE's 1-½-0 ("3-1-0"); "" when it is. */
export function otherPoints(f) {
  return f && f.points && f.points !== "1-0.5-0" ? String(f.points) : "";
}
/** A standings row's score for the screen: the event's points where it scores otherwise than 1-½-0 ("7 pts"),
 *  else the game score ("2½/3"), the part after the figure small; "—" before any game. */
export function fmtStanding(p) {
  if (present(p.points)) return fmtScore(p.points) + "<small> pts</small>";
  const r = results(p);
  return r && r.games ? fmtScore(r.score) + "<small>/" + r.games + "</small>" : DASH;
}

// -- the forecast (docs/forecast.md) ------------------------------------------------------------------------------

/** A chance for the screen, in whole percent: "38%"; "<1%" / ">99%" for a chance that is not quite 0 or 1 (only a
 *  certainty is "0%" or "100%"); "—" for none. */
export function fmtChance(p) {
  if (!present(p)) return DASH;
  if (p <= 0) return "0%";
  if (p >= 1) return "100%";
  const r = Math.round(p * 100);
  return r < 1 ? "<1%" : r > 99 ? ">99%" : r + "%";
}
/** The change of a chance since the round began, in whole percentage points: "+12", "−5", "±0"; "" when the
 *  chance at the round's start is not known. */
export function fmtPoints(now, start) {
  if (!present(now) || !present(start)) return "";
  const d = Math.round((now - start) * 100);
  return d > 0 ? "+" + d : d < 0 ? "−" + Math.abs(d) : "±0";
}
/** The forecast of ``event`` (the name the boards give it, "" for none): its own message, else the one forecast
 *  held when it names no board's event (all games as one: ``[event] name``, or "all games" when every game has an
 *  Event tag of its own); null when there is none. */
export function forecastOf(feed, event, boards) {
  if (feed.forecasts.has(event)) return feed.forecasts.get(event);
  if (feed.forecasts.size !== 1) return null;
  const [only] = feed.forecasts.values();
  const named = new Set([...(boards || feed.boards.values())].map(eventOf));
  return named.has(only.event) ? null : only;
}
/** A forecast's players split for the screen: ``contenders`` (a chance of first shown as at least 1%), most likely
 *  first, and ``others`` (the rest: ``{count, p}``, ``p`` their chances together). */
export function contenders(f) {
  const all = (f && Array.isArray(f.players) ? f.players : []).filter((p) => p && p.name);
  const chance = (p) => (present(p.p_first) ? p.p_first : 0);
  const sorted = [...all].sort((a, b) => chance(b) - chance(a) || (b.score || 0) - (a.score || 0) || byId(a.name, b.name));
  const shown = sorted.filter((p) => chance(p) >= 0.005);
  const rest = sorted.filter((p) => chance(p) < 0.005);
  return { contenders: shown, others: { count: rest.length, p: rest.reduce((s, p) => s + chance(p), 0), names: rest.map((p) => p.name) } };
}
/** What a forecast says of itself in a line: "round 5 · 4 rounds left · 4 games in progress · 20,000 simulations";
 *  only the round when the forecast is an error (nothing was simulated). */
export function forecastLine(f) {
  if (!f) return "";
  if (f.error) return f.round ? "round " + f.round : "";
  const n = (x, one, many) => `${x} ${x === 1 ? one : many}`;
  return [f.round ? "round " + f.round : "", present(f.rounds_left) && f.rounds ? n(f.rounds_left, "round left", "rounds left") : "",
    f.games_in_progress ? n(f.games_in_progress, "game in progress", "games in progress") : "",
    f.simulations ? Number(f.simulations).toLocaleString("en") + " simulations" : "",
    otherPoints(f) ? otherPoints(f) + " scoring" : ""].filter(Boolean).join(" · ");
}

export { SVG };

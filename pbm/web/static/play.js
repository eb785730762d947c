/* pbm board pages: turns clicks, taps and keys into the move text a mail would
   carry and sends it with the page's own form; keeps the board live.
   The server draws the board and decides what is legal: this script only reads
   the hooks and the targets the page carries (data-targets). Without it every
   page still works by its forms. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  /* The page's sentences for the scripts, in its language: the body's data-texts
     (JSON; no inline script under the CSP); %(name)s is filled from params. */
  var TEXTS = JSON.parse(document.body.getAttribute("data-texts"));
  function sentence(key, params) {
    return TEXTS[key].replace(/%\((\w+)\)s/g, function (all, name) { return String(params[name]); });
  }
  window.pbmText = sentence;  // for rooms.js
  var live = document.getElementById("live");
  if (!live) { return; }

  var frame = null, hooks = [], targets = null;
  var selected = null, chain = [], cursorName = null;
  var busy = false, replaced = false, zoom = 0;  // zoom: an index into ZOOMS
  var tab = randomId(), claimed = false, stream = null, retryDelay = 500, retryTimer = null;
  var announcer = document.createElement("p");
  announcer.className = "visually-hidden";
  announcer.setAttribute("aria-live", "polite");
  document.body.appendChild(announcer);

  function all(selector, root) { return Array.prototype.slice.call((root || document).querySelectorAll(selector)); }
  function one(selector, root) { return (root || document).querySelector(selector); }
  function hookName(hook) { return hook.getAttribute("data-point") || hook.getAttribute("data-cell"); }
  function hookNamed(name) { return hooks.filter(function (h) { return hookName(h) === name; })[0] || null; }
  function randomId() {
    var bytes = new Uint8Array(12);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }
  function setting(name, fallback) {
    try { var v = window.localStorage.getItem("pbm." + name); return v === null ? fallback : v; }
    catch (e) { return fallback; }
  }
  function remember(name, value) { try { window.localStorage.setItem("pbm." + name, value); } catch (e) { /* private mode */ } }
  function say(text) { var p = one("[data-explain-text]", live); if (p) { p.textContent = text; } }
  function playing() { return !!targets && !replaced && !busy; }

  /* ---- what may be chosen now ------------------------------------------------ */
  function paths() { return targets.paths.filter(function (p) { return chain.every(function (n, i) { return p[i] === n; }); }); }
  function nextPoints() {
    return paths().filter(function (p) { return p.length > chain.length; }).map(function (p) { return p[chain.length]; });
  }
  function chainIsMove() { return chain.length > 1 && paths().some(function (p) { return p.length === chain.length; }); }
  function isTarget(name) {
    if (!targets) { return false; }
    if (targets.mode === "point") { return Object.prototype.hasOwnProperty.call(targets.moves, name); }
    if (targets.mode === "path") { return nextPoints().indexOf(name) >= 0; }
    return true;
  }
  /* One click plays (as interface.md says); on a touch screen, where a finger misses,
     the first tap selects and the second plays, unless Settings says otherwise. */
  var CONFIRM_BY_DEFAULT = window.matchMedia && window.matchMedia("(pointer: coarse)").matches ? "1" : "0";
  function confirming() {
    return targets.mode === "point" && targets.confirm && setting("confirm", CONFIRM_BY_DEFAULT) === "1";
  }

  function paint() {
    hooks.forEach(function (h) {
      var name = hookName(h);
      h.classList.toggle("target", isTarget(name));
      h.classList.toggle("selected", name === selected);
      h.classList.toggle("chain", chain.indexOf(name) >= 0);
      h.classList.toggle("cursor", name === cursorName);
    });
    var bar = one("[data-selection]", live);
    if (!bar) { return; }
    var text = "", move = null;
    if (targets.mode === "point" && selected) {
      move = targets.moves[selected];
      text = sentence("selected", { point: selected });
    } else if (targets.mode === "path" && chain.length) {
      move = chainIsMove() ? chain.join("-") : null;
      text = sentence(move ? "chain_move" : "chain_on", { chain: chain.join("-") });
    }
    var appearing = bar.hidden && text;
    bar.hidden = !text;
    one("[data-selection-text]", bar).textContent = text;
    if (appearing) { bar.scrollIntoView({ block: "nearest" }); }  // "Play D4" may sit below the screen's edge
    var play = one('[data-action="play"]', bar);
    play.hidden = !move;
    play.textContent = move ? sentence("play_move", { move: move }) : sentence("play");
  }

  function clearSelection() {
    selected = null; chain = [];
    var choices = one("[data-choices]", live);
    if (choices) { choices.innerHTML = ""; }
    paint();
  }

  /* ---- choosing on the board ------------------------------------------------- */
  function choose(hook) {
    if (!playing()) { return; }
    var name = hookName(hook);
    say("");
    if (targets.mode === "point") {
      if (!isTarget(name)) { explain((targets.prefix || "") + name); return; }
      if (confirming() && selected !== name) { selected = name; paint(); return; }
      send(targets.moves[name]);
    } else if (targets.mode === "path") {
      var starts = chain.length === 1 && targets.paths.some(function (p) { return p[0] === name; });
      if (chain.length === 1 && chain[0] === name) { clearSelection(); return; }
      if (starts) { chain = [name]; paint(); return; }
      if (!isTarget(name)) { explain(chain.length ? chain.concat([name]).join("-") : name + "-" + nearest(hook)); return; }
      chain.push(name);
      if (nextPoints().length === 0) { send(chain.join("-")); return; }
      paint();
    } else {
      selected = name; paint(); orientations(name);
    }
  }

  function nearest(hook) {
    var c = centre(hook), best = null, bestDistance = Infinity;
    hooks.forEach(function (h) {
      var p = centre(h), d = Math.hypot(p.x - c.x, p.y - c.y);
      if (h !== hook && d < bestDistance) { best = h; bestDistance = d; }
    });
    return best ? hookName(best) : "";
  }

  function explain(move) {
    fetch(frame.getAttribute("data-explain") + "?move=" + encodeURIComponent(move), { cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (answer) { say(answer.error || ""); })
      .catch(function () { say(sentence("no_answer")); });
  }

  function orientations(cell) {
    var box = one("[data-choices]", live);
    fetch(frame.getAttribute("data-orientations") + "?cell=" + encodeURIComponent(cell), { cache: "no-store" })
      .then(function (r) { return r.text(); })
      .then(function (html) {
        box.innerHTML = html;
        var first = one("button", box);
        if (first) { first.focus({ preventScroll: false }); }
      })
      .catch(function () { say(sentence("no_answer")); });
  }

  /* ---- sending: always through a form of the page ---------------------------- */
  function send(move) {
    var form = one("[data-move-form]", live);
    if (busy || !form) { return; }
    form.elements.move.value = move;
    form.requestSubmit();
  }

  /* ---- the keyboard cursor --------------------------------------------------- */
  function centre(element) {
    var box = element.getBoundingClientRect();
    return { x: box.left + box.width / 2, y: box.top + box.height / 2 };
  }
  function setCursor(hook) {
    if (!hook) { return; }
    cursorName = hookName(hook);
    paint();
    hook.scrollIntoView({ block: "nearest", inline: "nearest" });
    var holds = targets && targets.holds && targets.holds[cursorName];
    var said = holds ? cursorName + ", " + holds : cursorName;  // "E5, a black stone"
    announcer.textContent = isTarget(cursorName) ? said : sentence("not_playable", { point: said });
  }
  function home() {
    var points = hooks.map(centre), best = null, bestDistance = Infinity;
    var xs = points.map(function (p) { return p.x; }), ys = points.map(function (p) { return p.y; });
    var middle = { x: (Math.min.apply(null, xs) + Math.max.apply(null, xs)) / 2,
                   y: (Math.min.apply(null, ys) + Math.max.apply(null, ys)) / 2 };
    hooks.forEach(function (h) {
      var p = centre(h), d = Math.hypot(p.x - middle.x, p.y - middle.y);
      if (d < bestDistance) { best = h; bestDistance = d; }
    });
    setCursor(best);
  }
  function step(dx, dy) {
    var from = hookNamed(cursorName);
    if (!from) { home(); return; }
    var c = centre(from), best = null, bestScore = Infinity;
    hooks.forEach(function (h) {
      var p = centre(h), ax = p.x - c.x, ay = p.y - c.y, along = ax * dx + ay * dy;
      if (h === from || along < 1) { return; }
      var score = along + 2 * Math.abs(ax * dy - ay * dx);
      if (score < bestScore) { best = h; bestScore = score; }
    });
    if (best) { setCursor(best); }
  }
  var ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };

  function onBoardKey(event) {
    if (!targets || !hooks.length) { return historyKey(event); }
    if (ARROWS[event.key]) { step(ARROWS[event.key][0], ARROWS[event.key][1]); }
    else if (event.key === "Home") { home(); }
    else if (event.key === "Enter" || event.key === " ") {
      var hook = hookNamed(cursorName);
      if (hook) { choose(hook); } else { home(); }
    } else if (event.key === "Escape") { clearSelection(); }
    else { return; }
    event.preventDefault();
  }

  /* ---- history: first / previous / next / last, and the slider ---------------- */
  function historyKey(event) {
    var names = { ArrowLeft: "previous", ArrowRight: "next", Home: "first", End: "last" };
    var link = names[event.key] && one('[data-history-step="' + names[event.key] + '"]', live);
    if (!link) { return; }
    event.preventDefault();
    stepTo(link.href, "board");
  }
  function showMove(slider) {
    var at = Number(slider.value), last = Number(slider.max);
    stepTo(window.location.pathname + (at === last ? "" : "?move=" + at), "slider");
  }
  // The page a history key or the slider stepped to gives the focus back to the board
  // or the slider ("board", "slider"), so the keys go on there.
  function stepTo(href, focus) {
    try { window.sessionStorage.setItem("pbm.focus", focus); } catch (e) { /* private mode */ }
    keepScroll();
    window.location.href = href;
  }
  function focusAfterStep() {
    try {
      var focus = window.sessionStorage.getItem("pbm.focus");
      window.sessionStorage.removeItem("pbm.focus");
      return focus;
    } catch (e) { return null; }
  }

  /* ---- zoom (big boards on small screens) ------------------------------------- */
  var ZOOMS = [1, 1.5, 2, 3];
  function setZoom(level) {
    zoom = Math.max(0, Math.min(ZOOMS.length - 1, level));
    frame.style.setProperty("--zoom", String(ZOOMS[zoom]));
    var cursor = hookNamed(cursorName);
    if (cursor) { cursor.scrollIntoView({ block: "center", inline: "center" }); }
  }

  /* ---- events on the live part (delegated: the part is swapped on each move) -- */
  live.addEventListener("click", function (event) {
    var target = event.target.closest("[data-point], [data-cell], [data-action], [data-cancel], [data-zoom-step], " +
                                      "[data-cell-link], .orientation-choice, [data-history-show], " +
                                      "[data-history-step]");
    if (!target) { return; }
    if (target.matches("[data-point], [data-cell]")) {
      if (frame.contains(target) && targets) { cursorName = hookName(target); choose(target); }
    } else if (target.matches('[data-action="play"]')) {
      if (targets.mode === "point" && selected) { send(targets.moves[selected]); }
      else if (chainIsMove()) { send(chain.join("-")); }
    } else if (target.matches("[data-action]")) {
      event.preventDefault();
      var action = target.getAttribute("data-action");
      if (action === "resign" && !target.hasAttribute("data-armed")) {
        target.setAttribute("data-armed", "");
        target.textContent = sentence("really_resign");
        return;
      }
      if (one("[data-move-form]", live)) { send(action); return; }
      if (action === "resign") {  // asked once more here: sent as the move itself (its button asks the page)
        var move = document.createElement("input");
        move.type = "hidden"; move.name = "move"; move.value = "resign";
        target.form.appendChild(move);
        target.form.requestSubmit();
        return;
      }
      target.form.requestSubmit(target);
    } else if (target.matches("[data-cancel]")) { clearSelection(); frame.focus(); }
    else if (target.matches("[data-zoom-step]")) { setZoom(zoom + Number(target.getAttribute("data-zoom-step"))); }
    else if (target.matches("[data-cell-link]")) {
      event.preventDefault();
      var hook = hookNamed(target.getAttribute("data-cell-link"));
      if (hook) { cursorName = hookName(hook); choose(hook); }
    } else if (target.matches(".orientation-choice")) { event.preventDefault(); send(target.value); }
    else if (target.matches("[data-history-step]") && !(event.ctrlKey || event.metaKey || event.shiftKey)) {
      keepScroll();  // the link loads the position's page in this tab
    }
  });
  live.addEventListener("keydown", function (event) {
    if (frame && event.target === frame) { onBoardKey(event); }
    else if (event.target.matches("[data-history-slider]")) { sliderKey(event); }
    else if (event.key === "Escape" && event.target.closest("[data-choices]")) { clearSelection(); frame.focus(); }
  });
  live.addEventListener("submit", function (event) {
    if (busy) { event.preventDefault(); return; }  // a second click on Send
    busy = true;
    live.setAttribute("aria-busy", "true");
    keepScroll();
  });
  // The page a move or a step through the history comes back to is scrolled as it was (on a phone the board is
  // below the room's explanation: the player would scroll down again for every move),
  // and its board zoomed in as far and scrolled inside its frame to the same place.
  function keepScroll() {
    try {
      window.sessionStorage.setItem("pbm.scroll", JSON.stringify({
        path: window.location.pathname, y: window.scrollY, zoom: zoom,
        left: frame ? frame.scrollLeft : 0, top: frame ? frame.scrollTop : 0 }));
    } catch (e) { /* private mode */ }
  }
  function restoreScroll() {
    try {
      var kept = JSON.parse(window.sessionStorage.getItem("pbm.scroll") || "null");
      window.sessionStorage.removeItem("pbm.scroll");
      if (!kept || kept.path !== window.location.pathname) { return; }
      var zoomBar = one("[data-zoom]", live);
      if (frame && zoomBar && !zoomBar.hidden && kept.zoom) {
        setZoom(kept.zoom);
        frame.scrollLeft = kept.left || 0;
        frame.scrollTop = kept.top || 0;
      }
      window.scrollTo(0, kept.y);
    } catch (e) { /* private mode, or not ours */ }
  }
  live.addEventListener("input", function (event) {
    if (event.target.matches("[data-history-slider]")) {
      one("[data-history-output]", live).textContent = sentence("move_of", { at: event.target.value,
                                                                                   last: event.target.max });
    }
  });
  /* The slider shows the position it is dropped on; moved by keys (each key is a
     change) it waits for Enter or its Show button, so that a key does not load a page. */
  var sliderByKeys = false;
  function sliderKey(event) {
    if (event.key === "Enter") { event.preventDefault(); showMove(event.target); return; }
    sliderByKeys = true;
    event.target.form.classList.add("keyed");
  }
  live.addEventListener("pointerdown", function (event) {
    if (event.target.matches("[data-history-slider]")) { sliderByKeys = false; }
  });
  live.addEventListener("change", function (event) {
    if (event.target.matches("[data-history-slider]") && !sliderByKeys) { showMove(event.target); }
  });

  /* ---- after the page or a new part of it arrives ------------------------------ */
  function setup() {
    frame = one("[data-board-frame]", live);
    hooks = frame ? all("[data-point], [data-cell]", frame) : [];
    targets = frame && frame.getAttribute("data-targets") ? JSON.parse(frame.getAttribute("data-targets")) : null;
    selected = null; chain = [];
    var zoomBar = one("[data-zoom]", live);
    if (zoomBar && frame) { zoomBar.hidden = false; setZoom(zoom); }
    var settings = one("[data-settings]");
    if (settings) {
      var box = one('[data-setting="confirm"]', settings);
      box.checked = setting("confirm", CONFIRM_BY_DEFAULT) === "1";
      settings.hidden = !(targets && targets.mode === "point" && targets.confirm);
    }
    var cell = frame && hookNamed(new URLSearchParams(window.location.search).get("cell"));
    if (cell && targets) { selected = hookName(cell); }
    if (targets) { paint(); }
    // The board takes the keyboard focus when it is this seat's to play (on opening,
    // and when the opponent's move arrives) or a board key stepped through the history
    // to this page, unless the person is busy elsewhere.
    var after = focusAfterStep(), slider = one("[data-history-slider]", live);
    if ((targets || after === "board") && frame && (!document.activeElement || document.activeElement === document.body)) {
      frame.focus({ preventScroll: true });
    } else if (after === "slider" && slider) {
      slider.focus();
    }
  }
  document.addEventListener("change", function (event) {
    if (event.target.matches('[data-setting="confirm"]')) {
      remember("confirm", event.target.checked ? "1" : "0");
      selected = null;
      if (targets) { paint(); }
    }
  });

  /* ---- live: server-sent events, reconnecting, and taken over by another tab ---- */
  /* What the reader was doing in the live part, carried across a swap: the typed move
     and comment, the focused control (and the caret in a text box), and, while the
     position shown stays the same (a request, an answer or a chat changed the page),
     the chosen point or chain, the offered orientations and the explanation. */
  function focusKey(element) {
    if (!element || !live.contains(element)) { return null; }
    if (element.id) { return "#" + CSS.escape(element.id); }
    if (element.matches("[data-board-frame]")) { return "[data-board-frame]"; }
    var action = element.getAttribute("data-action");
    return action ? '[data-action="' + CSS.escape(action) + '"]' : null;
  }
  function shownMove() { var svg = one("svg.board", live); return svg ? svg.getAttribute("data-move-number") : null; }
  function keep() {
    var form = one("[data-move-form]", live), active = document.activeElement, choices = one("[data-choices]", live);
    var explained = one("[data-explain-text]", live);
    return { typed: form ? { move: form.elements.move.value, comment: form.elements.comment.value } : null,
             focus: focusKey(active),
             caret: active && active.matches("input, textarea") ? [active.selectionStart, active.selectionEnd] : null,
             position: shownMove(), selected: selected, chain: chain.slice(),
             choices: choices ? choices.innerHTML : "", explained: explained ? explained.textContent : "" };
  }
  function restore(kept) {
    var form = one("[data-move-form]", live);
    if (form && kept.typed) { form.elements.move.value = kept.typed.move; form.elements.comment.value = kept.typed.comment; }
    if (targets && kept.position === shownMove()) {
      if (kept.selected && isTarget(kept.selected)) { selected = kept.selected; }
      chain = kept.chain;
      if (targets.mode === "path" && chain.length && !paths().length) { chain = []; }
      var choices = one("[data-choices]", live);
      if (choices && selected && targets.mode === "cell") { choices.innerHTML = kept.choices; }
      say(kept.explained);
      paint();
    }
    var focused = kept.focus && one(kept.focus, live);
    if (focused) {
      focused.focus({ preventScroll: true });
      if (kept.caret && focused.setSelectionRange) { focused.setSelectionRange(kept.caret[0], kept.caret[1]); }
    }
  }

  var refreshes = 0;  // a later refresh wins over an earlier one answered late
  function textOf(selector) { var found = one(selector, live); return found ? found.textContent : ""; }
  function refresh(version) {
    if (busy) { return; }
    var mine = ++refreshes;
    var url = live.getAttribute("data-live") + window.location.search;
    fetch(url, { cache: "no-store" })
      .then(function (r) { if (!r.ok) { throw new Error(r.status); } return r.text(); })
      .then(function (html) {
        if (mine !== refreshes || busy) { return; }
        var kept = keep(), said = textOf("[data-status]");
        live.innerHTML = html;
        live.setAttribute("data-board-version", String(version));
        setup();
        restore(kept);
        // A screen reader hears what changed: the picture's description (its last
        // move) and the new status line ("It is your turn"), as a sighted player sees it.
        if (textOf("[data-status]") !== said) {
          var picture = one("svg.board", live);
          announcer.textContent = (picture ? picture.getAttribute("aria-label") + ". " : "") + textOf("[data-status]");
        }
      })
      .catch(function () { if (mine === refreshes) { window.setTimeout(function () { refresh(version); }, 1000); } });
  }

  /* "Your boards" on a play page: the stream says when the list differs from the one
     shown (its digest, data-boards-mark), and the new list is fetched and swapped in. */
  var myBoards = document.getElementById("my-boards"), listRefreshes = 0;
  function refreshBoards(mark) {
    var mine = ++listRefreshes;
    fetch(myBoards.getAttribute("data-boards-live"), { cache: "no-store" })
      .then(function (r) { if (!r.ok) { throw new Error(r.status); } return r.text(); })
      .then(function (html) {
        if (mine !== listRefreshes) { return; }
        myBoards.innerHTML = html;
        myBoards.setAttribute("data-boards-mark", mark);
      })
      .catch(function () { if (mine === listRefreshes) { window.setTimeout(function () { refreshBoards(mark); }, 1000); } });
  }

  function connect() {
    if (replaced) { return; }
    window.clearTimeout(retryTimer);
    var url = live.getAttribute("data-events") + "?known=" + live.getAttribute("data-board-version") +
      "&tab=" + tab + (claimed ? "" : "&claim=1") +
      (myBoards ? "&boards=" + encodeURIComponent(myBoards.getAttribute("data-boards-mark")) : "");
    claimed = true;
    stream = new EventSource(url);
    stream.addEventListener("open", function () { retryDelay = 500; });
    stream.addEventListener("change", function (event) {
      var version = JSON.parse(event.data).version;
      if (String(version) !== live.getAttribute("data-board-version")) { refresh(version); }
    });
    stream.addEventListener("boards", function (event) {
      var mark = JSON.parse(event.data).mark;
      if (myBoards && mark !== myBoards.getAttribute("data-boards-mark")) { refreshBoards(mark); }
    });
    stream.addEventListener("again", reconnect);
    stream.addEventListener("resync", reconnect);
    stream.addEventListener("replaced", function () {
      stream.close();
      replaced = true;
      document.body.classList.add("replaced");
      // The dimmed parts take no click (CSS), nor the keyboard, nor are they read as text.
      all(".board-frame, .move-form, .actions", live).forEach(function (part) { part.inert = true; });
      var notice = one("[data-takeover]");
      if (notice) { notice.hidden = false; announcer.textContent = notice.textContent.replace(/\s+/g, " ").trim(); }
    });
    /* A lost connection is tried again soon, at most 2 s apart (a little less at
       random, so that the pages of a restarted server do not all come at once): a
       move made after the server is back shows within about 2 s, as any other. */
    stream.onerror = function () {
      stream.close();
      retryTimer = window.setTimeout(connect, retryDelay * (0.75 + Math.random() / 4));
      retryDelay = Math.min(retryDelay * 2, 2000);
    };
  }
  function reconnect() { stream.close(); connect(); }
  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-take-back]")) { window.location.reload(); }
  });
  // A tab left in the background gives its connection back after a while (browsers
  // allow six to one server) and catches up the moment it is shown again.
  var hiddenTimer = null;
  document.addEventListener("visibilitychange", function () {
    window.clearTimeout(hiddenTimer);
    if (document.hidden) {
      hiddenTimer = window.setTimeout(function () { window.clearTimeout(retryTimer); stream.close(); }, 5000);
    } else if (stream.readyState === EventSource.CLOSED && !replaced) { retryDelay = 500; connect(); }
  });
  window.addEventListener("online", function () { if (stream && !replaced) { retryDelay = 500; reconnect(); } });
  // Leaving the page (or entering the back-forward cache) frees the connection at once;
  // browsers allow only six to one server.
  window.addEventListener("pagehide", function () { window.clearTimeout(retryTimer); if (stream) { stream.close(); } });
  window.addEventListener("pageshow", function (event) { if (event.persisted && !replaced) { connect(); } });

  setup();
  restoreScroll();
  connect();
}());

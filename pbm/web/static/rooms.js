/* Games started at /new: this browser remembers them (localStorage, one list per
   way to play, kept apart as seed 003 says) and /new lists them to resume; the
   host's Copy button copies the invitation link; /new shows only the fields of the
   way to play chosen. Every page works without this script. */
(function () {
  "use strict";
  var text = window.pbmText;  // from play.js: the page's sentences, in its language
  var LISTS = { "same-device": text("list_same_device"), computer: text("list_computer"), friend: text("list_friend") };
  var KEEP = 20;  // games remembered per list, the latest first

  function load(mode) {
    try { return JSON.parse(window.localStorage.getItem("pbm.rooms." + mode) || "[]"); } catch (e) { return []; }
  }
  function store(mode, list) {
    try { window.localStorage.setItem("pbm.rooms." + mode, JSON.stringify(list.slice(0, KEEP))); }
    catch (e) { /* no storage here (private mode): nothing is remembered */ }
  }
  function element(tag, text, attributes) {
    var node = document.createElement(tag);
    if (text) { node.textContent = text; }
    Object.keys(attributes || {}).forEach(function (name) { node.setAttribute(name, attributes[name]); });
    return node;
  }

  /* ---- a room's play page: remember it -------------------------------------- */
  function remember(panel) {
    var mode = panel.getAttribute("data-room-mode");
    if (!LISTS[mode]) { return; }
    var status = document.querySelector("[data-status]");
    var entry = { room: panel.getAttribute("data-room"), title: panel.getAttribute("data-room-title"),
                  board: panel.getAttribute("data-room-board"), players: panel.getAttribute("data-room-players"),
                  href: panel.getAttribute("data-room-href"), status: status ? status.textContent : "" };
    store(mode, [entry].concat(load(mode).filter(function (e) { return e.room !== entry.room; })));
  }

  function copier(button) {
    var link = document.querySelector("[data-invite]"), told = document.querySelector("[data-copied]");
    button.hidden = false;
    button.addEventListener("click", function () {
      function done() { told.textContent = text("copied"); }
      function byHand() {
        window.getSelection().selectAllChildren(link);
        told.textContent = text(document.execCommand("copy") ? "copied" : "copy_by_hand");
      }
      if (navigator.clipboard && window.isSecureContext) { navigator.clipboard.writeText(link.href).then(done, byHand); }
      else { byHand(); }
    });
  }

  /* ---- /new: the remembered games, and the fields of the chosen way ----------- */
  function listSaved(section) {
    var lists = section.querySelector("[data-saved-lists]");
    lists.textContent = "";
    Object.keys(LISTS).forEach(function (mode) {
      var entries = load(mode);
      if (!entries.length) { return; }
      lists.appendChild(element("h3", LISTS[mode]));
      var ul = element("ul", "", { "data-saved": mode });
      entries.forEach(function (e) {
        var li = element("li");
        var link = element("a", text("saved_board", { title: e.title, board: e.board }),
                           { href: e.href, "data-saved-game": e.room });
        var state = element("span", " " + e.players + (e.status ? ": " + e.status : "") + " ", { "data-saved-status": "" });
        li.appendChild(link);
        li.appendChild(state);
        refresh(mode, e, link, state);
        var forget = element("button", text("forget"), { type: "button",
                                                          "aria-label": text("forget_board", { board: e.board }) });
        forget.addEventListener("click", function () {
          var place = Array.prototype.indexOf.call(section.querySelectorAll("[data-saved] button"), forget);
          store(mode, load(mode).filter(function (other) { return other.room !== e.room; }));
          listSaved(section);
          keepFocus(section, place);
        });
        li.appendChild(forget);
        ul.appendChild(li);
      });
      lists.appendChild(ul);
    });
    section.hidden = !lists.childNodes.length;
  }

  /* The list was built anew: the keyboard's place is the Forget button that took the
     forgotten one's place (or the one before it), or with none left the game chosen. */
  function keepFocus(section, place) {
    var buttons = section.querySelectorAll("[data-saved] button");
    var next = buttons[Math.min(place, buttons.length - 1)] ||
      document.querySelector("[data-game-choice][aria-current]");
    if (next) { next.focus(); }
  }

  /* What the list remembers is as the game's page last showed it: ask the server how
     it stands now (its latest round, in this page's language), and remember that. */
  function refresh(mode, e, link, state) {
    fetch(e.href + "/summary", { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (now) {
        if (!now) { return; }  // a link that is no longer valid: the list keeps what it had
        e.board = now.board; e.title = now.title; e.players = now.players; e.status = now.status; e.href = now.href;
        link.textContent = text("saved_board", { title: e.title, board: e.board });
        link.setAttribute("href", e.href);
        state.textContent = " " + e.players + (e.status ? ": " + e.status : "") + " ";
        store(mode, load(mode).map(function (other) { return other.room === e.room ? e : other; }));
      }, function () { /* offline: the list stays as remembered */ });
  }

  function followMode(form) {
    function show() {
      var checked = form.querySelector('input[name="mode"]:checked');
      var mode = checked ? checked.value : "";
      Array.prototype.forEach.call(form.querySelectorAll("[data-for-mode]"), function (part) {
        part.hidden = part.getAttribute("data-for-mode").split(" ").indexOf(mode) < 0;
      });
    }
    form.addEventListener("change", function (event) { if (event.target.name === "mode") { show(); } });
    show();
  }

  var panel = document.querySelector("[data-room]");
  if (panel) {
    remember(panel);
    window.addEventListener("pagehide", function () { remember(panel); });  // the status it ends with
  }
  var button = document.querySelector("[data-copy-invite]");
  if (button) { copier(button); }
  var saved = document.querySelector("[data-saved-games]");
  if (saved) { listSaved(saved); }
  var form = document.querySelector("[data-new-game]");
  if (form) { followMode(form); }
}());

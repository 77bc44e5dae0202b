// volcano-py dashboard: live updates. The server sends a "change" event (server-sent events, fed by the
// API server's watches) when what the pages show has changed; this re-fetches the current page's <main>
// and swaps it in. One fetch at a time; a change during a fetch triggers one more.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var busy = false, again = false;
  function mark(text, on) {
    if (!live) return;
    live.textContent = text;
    live.className = on ? "on" : "";
  }
  // A job page whose what-if was still searching when it was rendered: fetch the answer and show it.
  function fillWhatIf() {
    var pre = document.getElementById("whatif-text");
    var src = pre && pre.getAttribute("data-src");
    if (!src) return;
    pre.removeAttribute("data-src");
    fetch(src, {cache: "no-store"}).then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (answer) { pre.textContent = answer.section; })
      .catch(function () { pre.textContent = "The what-if failed; reload to try again."; });
  }
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    var url = location.pathname + (location.search ? location.search + "&" : "?") + "fragment=1";
    fetch(url, {cache: "no-store"}).then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var main = document.getElementById("main");
        if (main) main.innerHTML = html;
        fillWhatIf();
        mark("live · updated " + new Date().toLocaleTimeString(), true);
      })
      .catch(function () { mark("update failed; retrying", false); })
      .finally(function () { busy = false; if (again) { again = false; refresh(); } });
  }
  function connect() {
    if (!window.EventSource) { mark("no live updates in this browser", false); return; }
    var source = new EventSource("/stream");
    source.addEventListener("open", function () { mark("live", true); });
    source.addEventListener("change", refresh);
    source.addEventListener("error", function () { mark("reconnecting…", false); });
  }
  fillWhatIf();
  // After the page has loaded: the stream never ends, so it must not hold up the load event.
  if (document.readyState === "complete") connect();
  else window.addEventListener("load", function () { setTimeout(connect, 0); });
})();

// listwatch embed.js: include it once on a documentation page; every <pre class="listwatch"> and
// every <code class="language-listwatch"> (what mdBook and most Markdown renderers produce for a
// ```listwatch fenced block) becomes a live, embedded playground.
//
//   <script src="https://YOUR-SITE/listwatch/embed.js" defer></script>
//
// Options on the block (data-listwatch-*): panels="timeline,explanation,editor", theme="dark",
// autoplay, at="2.2s" (the moment it opens at). The script text and the moment travel to the
// iframe by postMessage; the iframe reports its height.
// It also fits the height of the iframes the playground's "Copy embed code" gives.
(function () {
  const here = document.currentScript && document.currentScript.src;
  const base = here ? new URL('./', here).href : './';
  const allowed = ['panels', 'theme', 'autoplay'];

  function embed(block) {
    const host = block.tagName === 'CODE' && block.parentElement && block.parentElement.tagName === 'PRE' ? block.parentElement : block;
    if (host.dataset.listwatchDone) return;
    host.dataset.listwatchDone = '1';
    const script = block.textContent;
    const at = moment(block.dataset.listwatchAt);
    const params = new URLSearchParams({ embed: '1', source: 'parent' });
    for (const k of allowed) {
      const v = block.dataset['listwatch' + k[0].toUpperCase() + k.slice(1)];
      if (v !== undefined) params.set(k, v);
    }
    const frame = document.createElement('iframe');
    frame.src = base + 'index.html?' + params.toString();
    frame.title = 'listwatch scenario';
    frame.className = 'listwatch-embed';
    frame.style.cssText = 'width:100%;height:560px;border:1px solid #d9dde3;border-radius:6px';
    frame.setAttribute('loading', 'lazy');
    fit(frame, script, at);
    host.replaceWith(frame);
  }

  /// A block's `at` in milliseconds, read as the scenario language reads a duration (`2.2s`,
  /// `2200ms`, `1m`, `1h`); undefined when there is none or it is not a time (the embed then
  /// opens at the start).
  function moment(at) {
    const m = /^\s*(\d+(?:\.\d+)?)(ms|s|m|h)\s*$/.exec(at || '');
    return m ? Math.round(Number(m[1]) * { ms: 1, s: 1000, m: 60000, h: 3600000 }[m[2]]) : undefined;
  }

  /// The frame takes the height its embed reports; a frame made here hands the embed its script
  /// (and the moment to open at, when the block names one).
  function fit(frame, script, at) {
    frame.dataset.listwatchDone = '1';
    window.addEventListener('message', (e) => {
      if (e.source !== frame.contentWindow || !e.data) return;
      if (e.data.listwatch === 'ready' && script !== undefined) frame.contentWindow.postMessage(at === undefined ? { listwatch: 'load', script } : { listwatch: 'load', script, at_ms: at }, '*');
      if (e.data.listwatch === 'height') {
        const h = parseInt(e.data.height, 10);
        if (h > 100 && h < 5000) frame.style.height = h + 'px';
      }
    });
  }

  function run() {
    document.querySelectorAll('pre.listwatch, code.language-listwatch').forEach(embed);
    // Iframes pasted from "Copy embed code" (their script is in their link).
    document.querySelectorAll('iframe.listwatch-embed').forEach((f) => f.dataset.listwatchDone || fit(f));
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run);
  else run();
})();

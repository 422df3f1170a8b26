// Start Pagefind's search UI on /search/ and run the query the header form sent (?q=).
// A big site's index comes in shards: /pagefind/shards.json lists the bundles to merge.
// They are merged all at once, not one after the other as the UI's own `mergeIndex` option
// merges them: at ten shards that took the first result from 0.94 s to 1.7 s.
// The preview runs the script again in the same document: after it updates the page in place,
// and when it serves a new search index (its "preview:search-index" event). Each time the
// search starts over on the index served then (a guide removed is no longer found, a shard
// added is merged) and searches again for what the reader last searched. So the script keeps
// its state on `window` and declares no constants.
var EXCERPT_WORDS = 12; // the UI's own with sub-results, now for every shard alike

async function shardBundles() {
  try {
    const response = await fetch("/pagefind/shards.json");
    return response.ok ? await response.json() : [];
  } catch {
    return []; // no list (the preview before its first index): the first shard alone
  }
}

// Merge every other shard into Pagefind's index: each started, not waited for (a search
// waits for every merged shard). A failure is logged unless a newer start superseded it.
async function mergeShards(start) {
  const bundles = await shardBundles();
  if (!bundles.length) {
    return [];
  }
  const pagefind = await import("/pagefind/pagefind.js");
  return bundles.map((bundle) =>
    pagefind.mergeIndex(bundle, { excerptLength: EXCERPT_WORDS }).catch((error) => {
      if (start === window.searchStarts) {
        console.error(`Pagefind could not load ${bundle}:`, error);
      }
    }),
  );
}

async function startSearch(start) {
  if (window.searchMerges) {
    // Started before in this document: let the last merges settle (3 s at most: one that
    // never ends must not stop the search from following), then drop every index Pagefind
    // holds (the last UI's too; its box is gone, or replaced here).
    const settled = Promise.allSettled(window.searchMerges);
    await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, 3000))]);
    const pagefind = await import("/pagefind/pagefind.js");
    await pagefind.destroy();
    document.querySelector("#search")?.replaceChildren();
  }
  window.searchMerges = await mergeShards(start);
  const ui = new PagefindUI({
    element: "#search",
    showSubResults: true,
    excerptLength: EXCERPT_WORDS,
    showImages: false,
    resetStyles: false,
    autofocus: true,
  });
  // Pagefind's input is labelled only by a title; name it by the page heading instead.
  const input = document.querySelector("#search input");
  if (input) {
    input.setAttribute("aria-labelledby", "search-title");
    input.setAttribute("name", "q");
    input.addEventListener("input", () => {
      window.searchTerm = input.value;
    });
  }
  const query = window.searchTerm ?? new URLSearchParams(window.location.search).get("q");
  if (query) {
    ui.triggerSearch(query);
  }
}

// One start at a time, each after the last has finished.
function searchAgain() {
  const start = (window.searchStarts ?? 0) + 1;
  window.searchStarts = start;
  window.searchStarted = (window.searchStarted ?? Promise.resolve())
    .then(() => startSearch(start))
    .catch((error) => console.error("Search could not start:", error));
}

if (!window.searchFollowsIndex) {
  window.searchFollowsIndex = true;
  window.addEventListener("preview:search-index", () => {
    if (document.querySelector("#search")) {
      searchAgain(); // still the search page (a tab updated in place may show another)
    }
  });
}
// Deferred, the script runs before DOMContentLoaded; the preview runs it again after
// swapping in a new page, when the document is long loaded.
if (document.readyState === "loading") {
  window.addEventListener("DOMContentLoaded", searchAgain);
} else {
  searchAgain();
}

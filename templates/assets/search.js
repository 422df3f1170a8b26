// Start Pagefind's search UI on /search/ and run the query the header form sent (?q=).
window.addEventListener("DOMContentLoaded", () => {
  const ui = new PagefindUI({
    element: "#search",
    showSubResults: true,
    showImages: false,
    resetStyles: false,
    autofocus: true,
  });
  // Pagefind's input is labelled only by a title; name it by the page heading instead.
  const input = document.querySelector("#search input");
  if (input) {
    input.setAttribute("aria-labelledby", "search-title");
    input.setAttribute("name", "q");
  }
  const query = new URLSearchParams(window.location.search).get("q");
  if (query) {
    ui.triggerSearch(query);
  }
});

// Live updates on a job page: new trajectory entries and the job's header arrive as
// server-sent events of server-rendered HTML. Without JavaScript the page is complete as
// loaded; a reload shows the rest.
(function () {
  "use strict";
  var steps = document.getElementById("steps");
  if (!steps || !steps.dataset.live || !window.EventSource) return;
  var source = new EventSource(steps.dataset.live + "?after=" + steps.dataset.after);
  source.addEventListener("block", function (event) {
    var empty = document.getElementById("no-steps");
    if (empty) empty.remove();
    steps.insertAdjacentHTML("beforeend", event.data);
  });
  source.addEventListener("head", function (event) {
    var head = document.getElementById("job-head");
    if (head) head.outerHTML = event.data;
  });
  source.addEventListener("end", function () {
    source.close();
    var note = document.getElementById("live-note");
    if (note) note.textContent = "The job has ended.";
  });
})();

// The manifest must reach GitHub as a browser form POST: send it at once.
document.getElementById("to-github").submit();

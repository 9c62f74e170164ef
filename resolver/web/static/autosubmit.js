// A form that must reach another site as a browser POST (a provider's app manifest) is sent at
// once: mark it `data-autosubmit`. A script file, not an inline one, for the page's CSP.
document.querySelectorAll("form[data-autosubmit]").forEach((form) => form.submit());

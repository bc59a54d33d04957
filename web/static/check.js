// Run check now (a destination's page) and Test before saving (the
// destination form): start the check, then follow its steps as they
// complete (server-sent events). Everything from the server is put in as
// text. Without script the forms post and the page comes back with the
// report.
"use strict";
(function () {
	if (!window.EventSource || !window.fetch) {
		return;
	}

	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls) { e.className = cls; }
		if (text !== undefined && text !== null) { e.textContent = String(text); }
		return e;
	}
	function statusClass(s) {
		return { ok: "ok", warn: "warn", fail: "bad" }[s] || "muted";
	}
	function evidence(ev) {
		if (!ev) { return ""; }
		return Object.keys(ev).sort().map(function (k) {
			var v = ev[k];
			if (Array.isArray(v)) {
				v = v.join(",");
			} else if (v !== null && typeof v === "object") {
				v = v.typed !== undefined ? v.typed : JSON.stringify(v);
			}
			return k + "=" + String(v);
		}).join(" ");
	}
	function addStep(list, st) {
		var li = el("li", "step " + statusClass(st.status));
		li.appendChild(el("span", "sid", st.id));
		li.appendChild(document.createTextNode(" "));
		li.appendChild(el("span", "pill " + statusClass(st.status), st.status));
		li.appendChild(document.createTextNode(" "));
		li.appendChild(el("span", "ms", st.ms + " ms"));
		li.appendChild(el("br"));
		li.appendChild(document.createTextNode(st.detail || ""));
		var ev = evidence(st.evidence);
		if (ev) {
			li.appendChild(el("br"));
			li.appendChild(el("code", "ev", ev));
		}
		list.appendChild(li);
	}
	function showVerdict(verdict, rep) {
		var v = rep.verdict || {};
		verdict.textContent = "";
		verdict.className = "verdict " + (v.cause === "ok" ? "ok-edge" : "bad-edge");
		var p = el("p");
		p.appendChild(el("span", "pill " + (v.cause === "ok" ? "ok" : "bad"), v.cause));
		if (v.kyocera_code) {
			p.appendChild(document.createTextNode(" panel code "));
			p.appendChild(el("b", "", v.kyocera_code));
		}
		verdict.appendChild(p);
		verdict.appendChild(el("p", "", v.summary));
		if (v.fix && v.cause !== "ok") {
			var f = el("p");
			f.appendChild(el("b", "", "Fix: "));
			f.appendChild(document.createTextNode(v.fix));
			verdict.appendChild(f);
		}
		if (rep.working_form) {
			var w = el("p");
			w.appendChild(el("b", "", "Working user name form: "));
			w.appendChild(el("code", "", rep.working_form.typed));
			verdict.appendChild(w);
		}
		verdict.hidden = false;
	}
	// refresh puts in the stored-report and history sections of the page as
	// the server now renders it (the report is stored once the stream ends).
	// The live steps and verdict stay: they are that stored report.
	function refresh() {
		return fetch(window.location.pathname, { credentials: "same-origin", cache: "no-store" })
			.then(function (r) {
				if (!r.ok) { throw new Error("the server answered " + r.status); }
				return r.text();
			})
			.then(function (html) {
				var doc = new DOMParser().parseFromString(html, "text/html");
				["verdict-line", "last-report", "history"].forEach(function (id) {
					var cur = document.getElementById(id);
					var fresh = doc.getElementById(id);
					if (cur && fresh) {
						cur.replaceWith(document.importNode(fresh, true));
					}
				});
				var stored = document.getElementById("last-report");
				if (stored) { stored.hidden = true; } // the live report above is this one
			});
	}
	// follow starts a check with a POST of body to action and streams it
	// into the list and verdict elements; o.end runs when the stream ends.
	function follow(o) {
		o.button.disabled = true;
		o.list.textContent = "";
		o.list.hidden = false;
		o.verdict.hidden = true;
		o.state.textContent = "Starting…";
		function done(text) {
			o.state.textContent = text;
			o.button.disabled = false;
		}
		fetch(o.action, { method: "POST", headers: o.headers, body: o.body, credentials: "same-origin" })
			.then(function (r) {
				if (!r.ok) {
					var err = new Error("the server answered " + r.status);
					err.status = r.status;
					throw err;
				}
				return r.json();
			})
			.then(function (j) {
				o.state.textContent = "Checking…";
				var es = new EventSource(j.events);
				es.addEventListener("step", function (m) { addStep(o.list, JSON.parse(m.data)); });
				es.addEventListener("verdict", function (m) { showVerdict(o.verdict, JSON.parse(m.data)); o.onVerdict(); });
				es.addEventListener("failed", function (m) {
					es.close();
					var f = JSON.parse(m.data);
					// a field of the form is wrong: the page says which, beside it
					if (f.field && o.refused && o.refused({ status: 400 })) { return; }
					done(f.error);
				});
				es.onerror = function () { es.close(); done(o.cut); };
				es.addEventListener("end", function () {
					es.close();
					o.end(done);
				});
			})
			.catch(function (err) {
				if (o.refused && o.refused(err)) { return; }
				done("Could not start the check: " + err.message);
			});
	}

	var form = document.getElementById("check-form");
	if (form) {
		form.dataset.live = "on"; // tests wait for this before they click
		form.addEventListener("submit", function (e) {
			e.preventDefault();
			follow({
				action: form.action, headers: { "Accept": "application/json" },
				button: document.getElementById("run-check"), state: document.getElementById("check-state"),
				list: document.getElementById("live-steps"), verdict: document.getElementById("live-verdict"),
				cut: "The stream was cut; reload the page for the stored report.",
				onVerdict: function () {
					var old = document.getElementById("last-report");
					if (old) { old.hidden = true; } // the live report is the newest
				},
				end: function (done) {
					refresh().then(function () { done("Done; the report is stored."); },
						function () { done("Done; the report is stored (reload for the history)."); });
				}
			});
		});
	}

	// Test before saving: the destination form's second button checks what
	// the form holds; nothing is stored. A form the server refuses (a field
	// is wrong) is sent again without script: the page shows the error
	// beside the field.
	var dform = document.getElementById("destination-form");
	var tryButton = document.getElementById("destination-try");
	if (dform && tryButton) {
		var bypass = false;
		dform.dataset.live = "on";
		dform.addEventListener("submit", function (e) {
			if (bypass || e.submitter !== tryButton) {
				return;
			}
			e.preventDefault();
			var old = document.getElementById("try-report");
			if (old) { old.hidden = true; }
			follow({
				action: tryButton.formAction, body: new URLSearchParams(new FormData(dform)),
				headers: { "Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded" },
				button: tryButton, state: document.getElementById("try-state"),
				list: document.getElementById("try-steps"), verdict: document.getElementById("try-verdict"),
				cut: "The stream was cut; test again.",
				onVerdict: function () {},
				end: function (done) { done("Done; nothing was stored."); },
				refused: function (err) {
					if (err.status !== 400) { return false; }
					bypass = true;
					dform.requestSubmit(tryButton);
					return true;
				}
			});
		});
	}
})();

// Run check now: start the check, then follow its steps as they complete
// (server-sent events). Everything from the server is put in as text.
"use strict";
(function () {
	var form = document.getElementById("check-form");
	if (!form || !window.EventSource || !window.fetch) {
		return; // without script the form posts and the page reloads with the report
	}
	var button = document.getElementById("run-check");
	var state = document.getElementById("check-state");
	var list = document.getElementById("live-steps");
	var verdict = document.getElementById("live-verdict");

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
	function addStep(st) {
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
	function showVerdict(rep) {
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
		var old = document.getElementById("last-report");
		if (old) { old.hidden = true; } // the live report is the newest
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
				["last-report", "history"].forEach(function (id) {
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
	function done(text) {
		state.textContent = text;
		button.disabled = false;
	}

	form.dataset.live = "on"; // tests wait for this before they click
	form.addEventListener("submit", function (e) {
		e.preventDefault();
		button.disabled = true;
		list.textContent = "";
		list.hidden = false;
		verdict.hidden = true;
		state.textContent = "Starting…";
		fetch(form.action, { method: "POST", headers: { "Accept": "application/json" }, credentials: "same-origin" })
			.then(function (r) {
				if (!r.ok) { throw new Error("the server answered " + r.status); }
				return r.json();
			})
			.then(function (j) {
				state.textContent = "Checking…";
				var es = new EventSource(j.events);
				es.addEventListener("step", function (m) { addStep(JSON.parse(m.data)); });
				es.addEventListener("verdict", function (m) { showVerdict(JSON.parse(m.data)); });
				es.addEventListener("failed", function (m) { es.close(); done(JSON.parse(m.data).error); });
				es.onerror = function () { es.close(); done("The stream was cut; reload the page for the stored report."); };
				es.addEventListener("end", function () {
					es.close();
					refresh().then(function () { done("Done; the report is stored."); },
						function () { done("Done; the report is stored (reload for the history)."); });
				});
			})
			.catch(function (err) { done("Could not start the check: " + err.message); });
	});
})();

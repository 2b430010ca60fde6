// Answers date questions the way Node's own Date and Intl do, for ctxview's jsdate tests.
//
// Reads one JSON object on stdin:
//   {"parse": [string…], "utc": [string…], "iso": [number…], "format": [[ms, zone|null]…], "zones": [string…]}
// and writes the answers in the same shape: parse/utc → ms or null (NaN); iso and format → the string,
// or {"error": "<name>: <message>"} when JavaScript throws; zones → the resolved id or null (refused).
// "utc" applies the stored-timestamp rule of spec §1 before parsing.
// Run with TZ=UTC (the module under test assumes a UTC process zone).
"use strict";

const readStdin = () => require("fs").readFileSync(0, "utf8");

const number = (value) => (Number.isNaN(value) ? null : value);

function withStoredTimestampRule(text) {
  const trimmed = text.trim();
  if (/(?:[zZ]|[+-][0-9]{2}:[0-9]{2})$/.test(trimmed)) return trimmed;
  return `${trimmed.includes("T") ? trimmed : trimmed.replace(" ", "T")}Z`;
}

function attempt(fn) {
  try {
    return fn();
  } catch (error) {
    return { error: `${error.name}: ${error.message}` };
  }
}

const formatters = new Map();

function formatterFor(zone) {
  // Cached per zone only for speed; a refused zone throws on every call, as uncached.
  if (!formatters.has(zone)) {
    formatters.set(
      zone,
      new Intl.DateTimeFormat("en-CA", {
        timeZone: zone,
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        second: "2-digit",
        hour12: false,
      }),
    );
  }
  return formatters.get(zone);
}

function wallTime(ms, zone) {
  const date = new Date(ms);
  try {
    const formatter = formatterFor(zone ?? "UTC");
    const parts = {};
    for (const part of formatter.formatToParts(date)) parts[part.type] = part.value;
    return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
  } catch {
    return date.toISOString();
  }
}

function resolvedZone(name) {
  try {
    return new Intl.DateTimeFormat("en", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

const request = JSON.parse(readStdin());
const answer = {
  parse: (request.parse ?? []).map((text) => number(new Date(text).getTime())),
  utc: (request.utc ?? []).map((text) => number(new Date(withStoredTimestampRule(text)).getTime())),
  iso: (request.iso ?? []).map((ms) => attempt(() => new Date(ms ?? NaN).toISOString())),
  format: (request.format ?? []).map(([ms, zone]) => attempt(() => wallTime(ms ?? NaN, zone))),
  zones: (request.zones ?? []).map(resolvedZone),
};
process.stdout.write(JSON.stringify(answer));

"""The helper vectors' result-limit and progress cases (kinds
`result_limits` and `progress`), for tests/vectors/generate_helpers.py:
the rules of CONTRACT §5 written here once, from the contract, in Python's
standard library only (never project code). selfcheck_helpers.py derives
each expectation a second way.

`result_limits`: `input.result_json_parts` is the result's JSON as a list
of `[piece, times]` to concatenate (a 5 MiB image stays small in the file);
`expect` is `{"findings": [{"code", "message", "size", "limit", "index"?}]}`
in the core's order, or `{"error": code}` for a result no one can check.

`progress`: `input.interval_ms` (the user's setting as given: CONTRACT
§5's precise point on settings reads 0 as the default, the range starting
at 1 ms) and `input.events`, each
`{"at": ms, "report": [progress, total, message]}`, `{"at", "flush": true}`
or `{"at", "close": true}`, at non-decreasing times. A timer armed for a
held report fires at its flush time, before an event at that same time.
`expect.answers` is one per event (`send`, `hold`, `drop:<why>`, `none`,
`closed`); `expect.sent` every notification with its time.
"""

import json
import math

TEXT_CHARS = 8000
STRUCTURED_CHARS = 16000
IMAGE_BYTES = 5 * 1024 * 1024
IMAGES = 8
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
INTERVAL_MS = 500


def _case(name, kind, input, expect):
    return {"name": name, "kind": kind, "input": input, "expect": expect}


def _str(s):
    """A JSON string as JSON.stringify writes it: json.dumps without
    ensure_ascii escapes exactly the same characters the same way."""
    return json.dumps(s, ensure_ascii=False)


# ---------------------------------------------------------------------------
# result_limits
# ---------------------------------------------------------------------------
def text_block(parts):
    """A text block whose text is `parts` ([piece, times] of raw JSON string
    content, escapes allowed)."""
    return [['{"type":"text","text":"', 1]] + parts + [['"}', 1]]


def image_block(parts, mime):
    m = [] if mime is None else [[',"mimeType":' + _str(mime), 1]]
    return [['{"type":"image","data":"', 1]] + parts + [['"', 1]] + m + [["}", 1]]


def resource_block(mime, blob="AAAA"):
    return [['{"type":"resource","resource":{"uri":"file:///x","mimeType":' + _str(mime)
             + ',"blob":' + _str(blob) + "}}", 1]]


def result(blocks, extra=""):
    parts = [['{"content":[', 1]]
    for i, b in enumerate(blocks):
        if i:
            parts.append([",", 1])
        parts.extend(b)
    parts.append(["]" + extra + "}", 1])
    return parts


def expand(parts):
    return "".join(piece * times for piece, times in parts)


def b64_len(data):
    """Decoded bytes: base64 characters other than `=` and ASCII whitespace,
    times 3/4 rounded down."""
    n = sum(1 for c in data if c != "=" and c not in " \t\n\r\f")
    return n * 3 // 4


def jcs(v):
    """JSON.stringify of a parsed value, for the values these cases use
    (integers, strings, objects, arrays, true/false/null, and decimals that
    are whole numbers or that Python's repr writes as ECMAScript does)."""
    if isinstance(v, bool) or v is None:
        return {True: "true", False: "false", None: "null"}[v]
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return str(int(v)) if v == int(v) and abs(v) < 2 ** 53 else repr(v)
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, list):
        return "[" + ",".join(jcs(x) for x in v) + "]"
    return "{" + ",".join(_str(k) + ":" + jcs(x) for k, x in v.items()) + "}"


def findings(text):
    """The rule: what the result `text` runs into, in the core's order."""
    r = json.loads(text)
    out, chars, images = [], 0, 0
    for i, b in enumerate(r.get("content") or []):
        t = b.get("type") if isinstance(b, dict) else None
        if t == "text":
            chars += len(b["text"]) if isinstance(b.get("text"), str) else 0
            continue
        if t == "image":
            mime = b.get("mimeType") if isinstance(b.get("mimeType"), str) else None
            data = b.get("data") if isinstance(b.get("data"), str) else ""
        elif t == "resource":
            res = b.get("resource") or {}
            mime, data = res.get("mimeType"), res.get("blob")
            if not (isinstance(mime, str) and isinstance(data, str) and mime.startswith("image/")):
                continue
        else:
            continue
        images += 1
        if mime not in IMAGE_TYPES:
            out.append({"code": "image_type",
                        "message": f"image {i} is {mime or 'untyped'}: only PNG, JPEG, GIF and WebP images are kept",
                        "size": 0, "limit": 0, "index": i})
        n = b64_len(data)
        if n > IMAGE_BYTES:
            out.append({"code": "image_too_large",
                        "message": f"image {i} is {n} bytes, over the {IMAGE_BYTES}-byte limit",
                        "size": n, "limit": IMAGE_BYTES, "index": i})
    if chars > TEXT_CHARS:
        out.append({"code": "text_offloaded",
                    "message": f"the result's text is {chars} characters: over {TEXT_CHARS} the platform "
                    "offloads it and the model sees a pointer and a preview",
                    "size": chars, "limit": TEXT_CHARS})
    if images > IMAGES:
        out.append({"code": "too_many_images", "message": f"the result has {images} images, more than {IMAGES}",
                    "size": images, "limit": IMAGES})
    if "structuredContent" in r:
        n = len(jcs(r["structuredContent"]))
        if n > STRUCTURED_CHARS:
            out.append({"code": "structured_dropped",
                        "message": f"structuredContent is {n} characters of JSON: over {STRUCTURED_CHARS} "
                        "the platform drops it",
                        "size": n, "limit": STRUCTURED_CHARS})
    return out


def _b64_for(nbytes, pad=True):
    """Base64 text of exactly `nbytes` decoded bytes, as parts."""
    full, rest = divmod(nbytes, 3)
    parts = [["AAAA", full]]
    if rest:
        parts.append(["AA" if rest == 1 else "AAA", 1])
        if pad:
            parts.append(["==" if rest == 1 else "=", 1])
    return parts


def result_limit_rows():
    """(name, parts) for every case whose expectation is findings."""
    astral = "\U0001f600"
    rows = [
        ("empty result", [['{"content":[]}', 1]]),
        ("text at the limit", result([text_block([["x", TEXT_CHARS]])])),
        ("text one over", result([text_block([["x", TEXT_CHARS + 1]])])),
        ("text over in two blocks", result([text_block([["a", 4000]]), text_block([["b", 4001]])])),
        ("astral characters count once (8000 emoji)", result([text_block([[astral, TEXT_CHARS]])])),
        ("astral characters count once (8001 emoji)", result([text_block([[astral, TEXT_CHARS + 1]])])),
        ("escaped surrogate pair counts once", result([text_block([["a", TEXT_CHARS - 1], ["\\ud83d\\ude00", 1]])])),
        ("escapes count as the character", result([text_block([["\\n", TEXT_CHARS], ["\\u00e9", 1]])])),
        ("two-byte characters at the limit", result([text_block([["\u00e9", TEXT_CHARS]])])),
        ("text of a non-string is nothing", [['{"content":[{"type":"text","text":5}]}', 1]]),
        ("structured at the limit", [['{"content":[],"structuredContent":{"k":"', 1], ["x", STRUCTURED_CHARS - 8], ['"}}', 1]]),
        ("structured one over", [['{"content":[],"structuredContent":{"k":"', 1], ["x", STRUCTURED_CHARS - 7], ['"}}', 1]]),
        ("structured whitespace and 1.0 do not count", [['{"content":[],"structuredContent" : [ ', 1], ["1.0 , ", 7998], ["1.0 ]}", 1]]),
        ("structured 1.0 written as 1, over", [['{"content":[],"structuredContent":[', 1], ["1.0,", 8000], ["1]}", 1]]),
        ("structured astral counts once", [['{"content":[],"structuredContent":{"k":"', 1], [astral, STRUCTURED_CHARS - 8], ['"}}', 1]]),
        ("structured escapes measured as JSON.stringify writes them", [['{"content":[],"structuredContent":{"k":"', 1], ["\\u0001", 2666], ['"}}', 1]]),
        ("structured null", [['{"content":[],"structuredContent":null}', 1]]),
        ("eight images", result([image_block([["AAAA", 1]], "image/png")] * IMAGES)),
        ("nine images", result([image_block([["AAAA", 1]], "image/png")] * (IMAGES + 1))),
        ("nine images, one a resource", result([image_block([["AAAA", 1]], "image/webp")] * IMAGES + [resource_block("image/png")])),
        ("resources that are not images do not count", result([resource_block("text/plain")] * 9)),
        ("each image type kept", result([image_block([["AAAA", 1]], m) for m in IMAGE_TYPES])),
        ("bmp, svg and upper case are not kept", result([image_block([["AAAA", 1]], m) for m in ("image/bmp", "image/svg+xml", "image/PNG")])),
        ("untyped and empty-typed images", result([image_block([["AAAA", 1]], None), image_block([["AAAA", 1]], "")])),
        ("a resource image of another type", result([resource_block("image/tiff")])),
        ("image exactly 5 MiB, padded", result([image_block(_b64_for(IMAGE_BYTES), "image/png")])),
        ("image exactly 5 MiB, unpadded", result([image_block(_b64_for(IMAGE_BYTES, pad=False), "image/jpeg")])),
        ("image one byte over", result([image_block(_b64_for(IMAGE_BYTES + 1), "image/gif")])),
        ("image one byte over, unpadded", result([image_block(_b64_for(IMAGE_BYTES + 1, pad=False), "image/webp")])),
        # MIME base64: 76 characters a line; 91980 lines and 27 characters are 5 MiB.
        ("line breaks in base64 do not count", result([image_block([["A" * 76 + "\\r\\n", 91980], ["A" * 27 + "=", 1]], "image/png")])),
        ("with line breaks, one character more is over", result([image_block([["A" * 76 + "\\n", 91980], ["A" * 28, 1]], "image/png")])),
        ("a large bmp: type and size", result([image_block(_b64_for(IMAGE_BYTES + 3), "image/bmp")])),
        ("image without data", [['{"content":[{"type":"image","mimeType":"image/png"}]}', 1]]),
        ("isError changes nothing", result([text_block([["e", TEXT_CHARS + 1]])], ',"isError":true')),
        ("every limit at once", result([text_block([["x", TEXT_CHARS + 1]]), image_block(_b64_for(IMAGE_BYTES + 3), "image/bmp")]
                                       + [image_block([["AAAA", 1]], "image/png")] * IMAGES,
                                       ',"structuredContent":{"k":"' + "v" * STRUCTURED_CHARS + '"}')),
        ("unknown blocks and members are ignored", [['{"content":[{"type":"audio","data":"AAAA","mimeType":"audio/wav"},{"type":"resource_link","uri":"x:"},7,null],"_meta":{"a":1}}', 1]]),
        ("no content", [['{"isError":true}', 1]]),
    ]
    return rows


ERROR_ROWS = [
    ("not an object", [["[]", 1]], "result_shape"),
    ("content is not an array", [['{"content":{"type":"text","text":"x"}}', 1]], "result_shape"),
    ("a lone surrogate", [['{"content":[{"type":"text","text":"\\ud800"}]}', 1]], "result_not_json"),
    ("not JSON", [['{"content":[', 1]], "result_not_json"),
]


def result_limit_cases():
    out = [_case("result limits: " + name, "result_limits", {"result_json_parts": parts},
                 {"findings": findings(expand(parts))})
           for name, parts in result_limit_rows()]
    out += [_case("result limits refused: " + name, "result_limits", {"result_json_parts": parts}, {"error": code})
            for name, parts, code in ERROR_ROWS]
    return out


# ---------------------------------------------------------------------------
# progress
# ---------------------------------------------------------------------------
def interval_setting(ms):
    """The `progress_interval_ms` setting as the user gave it: 0 is the
    default (the range starts at 1 ms)."""
    return INTERVAL_MS if ms == 0 else ms


def coalesce(interval, events):
    """The rule, as a loop over events with the held report's timer."""
    interval = interval_setting(interval)

    last = None
    last_sent = None
    held = None
    timer = None  # when the armed timer fires
    finished = False
    answers, sent = [], []

    def out(at, r):
        nonlocal last_sent, held, timer
        last_sent, held, timer = at, None, None
        sent.append({"at": at, "progress": r[0], "total": r[1], "message": r[2]})

    def fire_until(t):
        nonlocal timer, held
        while timer is not None and timer <= t:
            at, timer = timer, None
            if held is not None and not finished:
                out(at, held)
            held = None if finished else held

    for ev in events:
        at = ev["at"]
        fire_until(at)
        if "report" in ev:
            p, total, message = ev["report"]
            if finished:
                answers.append("drop:finished")
            elif not math.isfinite(p) or (total is not None and not math.isfinite(total)):
                answers.append("drop:not_finite")
            elif last is not None and p <= last:
                answers.append("drop:not_increasing")
            else:
                last = p
                if total is not None and p >= total:
                    finished = True
                    out(at, (p, total, message))
                    answers.append("send")
                elif last_sent is None or at >= last_sent + interval:
                    out(at, (p, total, message))
                    answers.append("send")
                else:
                    if held is None:
                        timer = last_sent + interval
                    held = (p, total, message)
                    answers.append("hold")
        elif "flush" in ev:
            if held is not None and not finished:
                out(at, held)
                answers.append("send")
            else:
                answers.append("none")
        else:
            finished, held, timer = True, None, None
            answers.append("closed")
    fire_until(float("inf"))
    return answers, sent


def R(at, p, total=None, message=None):
    return {"at": at, "report": [p, total, message]}


PROGRESS_ROWS = [
    ("first report goes at once", INTERVAL_MS, [R(0, 1, 10)]),
    ("inside the interval: held, the latest goes at its end",
     INTERVAL_MS, [R(0, 1, 10), R(100, 2, 10), R(200, 3, 10, "three"), R(900, 4, 10)]),
    ("exactly at the interval: at once", INTERVAL_MS, [R(0, 1), R(500, 2), R(999, 3), R(1000, 4)]),
    ("one millisecond early: held to the interval", INTERVAL_MS, [R(0, 1), R(499, 2), R(1000, 3)]),
    ("not above the last: dropped", INTERVAL_MS, [R(0, 1), R(600, 1), R(700, 0.5), R(1200, 2)]),
    ("the final report at once, the held one dropped",
     INTERVAL_MS, [R(0, 1, 10), R(100, 5, 10), R(200, 10, 10), R(300, 11, 10), R(2000, 12, 10)]),
    ("over the total is final too", INTERVAL_MS, [R(0, 1, 3), R(10, 7, 3), R(20, 8, 3)]),
    ("flush sends the held report and restarts the interval",
     INTERVAL_MS, [R(0, 1), R(100, 2), {"at": 200, "flush": True}, R(300, 3), R(650, 4), R(800, 5)]),
    ("flush with nothing held", INTERVAL_MS, [R(0, 1), {"at": 10, "flush": True}]),
    ("close drops the held report and what follows",
     INTERVAL_MS, [R(0, 1), R(100, 2), {"at": 200, "close": True}, R(800, 3)]),
    ("a held report whose timer fires at the next report's time",
     INTERVAL_MS, [R(0, 1), R(100, 2), R(500, 3)]),
    ("fractions and messages", INTERVAL_MS, [R(0, 0.25, 1.5, "a"), R(10, 0.5, 1.5, "b"), R(600, 0.75, 1.5, "caf\u00e9 \U0001f600"), R(700, 1.5, 1.5, "done")]),
    ("a zero interval is the default (500 ms), not no limit", 0, [R(0, 1), R(0, 2), R(0, 3), R(499, 4), R(500, 5)]),
    ("the shortest interval (1 ms) sends a report a millisecond", 1, [R(0, 1), R(0, 2), R(1, 3), R(3, 4)]),
    ("a long quiet stretch", INTERVAL_MS, [R(0, 1), R(100, 2), R(10000, 3), R(10001, 4), R(10501, 5)]),
    ("final as the first report", INTERVAL_MS, [R(0, 5, 5), R(1000, 6, 10)]),
]


def progress_cases():
    out = []
    for name, interval, events in PROGRESS_ROWS:
        answers, sent = coalesce(interval, events)
        out.append(_case("progress: " + name, "progress", {"interval_ms": interval, "events": events},
                         {"answers": answers, "sent": sent}))
    return out


def cases():
    return result_limit_cases() + progress_cases()

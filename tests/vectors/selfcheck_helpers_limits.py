"""The self-check of the `result_limits` and `progress` helper vectors
(stdlib only, no code shared with helpers_limits_cases.py), for
selfcheck_helpers.py: results parsed by json.loads with lone surrogates
found by a walk, characters counted as UTF-16 units less surrogate pairs,
structuredContent's JSON length summed over the parsed tree,
image sizes by really decoding the base64; progress by a time-ordered queue
of reports and timer firings.
"""

import base64
import heapq
import json
import math
import re

PNG_LIKE = ("image/png", "image/jpeg", "image/gif", "image/webp")


def _chars(s):
    """UTF-16 code units less one per astral character (a surrogate pair)."""
    units = len(s.encode("utf-16-le", "surrogatepass")) // 2
    return units - sum(1 for c in s if ord(c) > 0xFFFF)


def _lone_surrogate(v):
    if isinstance(v, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in v)
    if isinstance(v, list):
        return any(_lone_surrogate(x) for x in v)
    if isinstance(v, dict):
        return any(_lone_surrogate(k) or _lone_surrogate(x) for k, x in v.items())
    return False


def _whole(v):
    if isinstance(v, float) and v == int(v):
        return int(v)
    if isinstance(v, list):
        return [_whole(x) for x in v]
    if isinstance(v, dict):
        return {k: _whole(x) for k, x in v.items()}
    return v


def _json_len(v):
    """Characters of JSON.stringify(v), summed over the tree without
    writing it: escapes 2 (short forms) or 6 (other controls) each."""
    if v is None or v is True:
        return 4
    if v is False:
        return 5
    if isinstance(v, (int, float)):
        return len(str(_whole(v)))
    if isinstance(v, str):
        return 2 + sum(2 if c in '"\\\b\f\n\r\t' else 6 if ord(c) < 0x20 else 1 for c in v)
    if isinstance(v, list):
        return 2 + max(0, len(v) - 1) + sum(_json_len(x) for x in v)
    return 2 + max(0, len(v) - 1) + sum(_json_len(k) + 1 + _json_len(x) for k, x in v.items())


def _decoded(data):
    s = re.sub("[ \t\n\r\f]", "", data).rstrip("=")
    if len(s) % 4 == 1:  # not decodable: what the characters stand for
        return len(s) * 3 // 4
    return len(base64.b64decode(s + "=" * (-len(s) % 4)))


def check_result_limits(i, e):
    text = "".join(p * n for p, n in i["result_json_parts"])
    try:
        r = json.loads(text)
    except ValueError:
        return {"error": "result_not_json"}
    if _lone_surrogate(r):
        return {"error": "result_not_json"}
    if not isinstance(r, dict) or not isinstance(r.get("content", []), (list, type(None))):
        return {"error": "result_shape"}
    per_image, chars, count = [], 0, 0
    for idx, b in enumerate(r.get("content") or []):
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "text":
            if isinstance(b.get("text"), str):
                chars += _chars(b["text"])
            continue
        if kind == "resource":
            res = b.get("resource") if isinstance(b.get("resource"), dict) else {}
            mime, data = res.get("mimeType"), res.get("blob")
            if not (isinstance(mime, str) and mime[:6] == "image/" and isinstance(data, str)):
                continue
        elif kind == "image":
            mime, data = b.get("mimeType"), b.get("data")
        else:
            continue
        count += 1
        if not (isinstance(mime, str) and mime in PNG_LIKE):
            shown = mime if isinstance(mime, str) and mime else "untyped"
            per_image.append({"code": "image_type", "message": "image %d is %s: only PNG, JPEG, GIF and WebP images are kept" % (idx, shown),
                              "size": 0, "limit": 0, "index": idx})
        size = _decoded(data if isinstance(data, str) else "")
        if size > 5242880:
            per_image.append({"code": "image_too_large", "message": "image %d is %d bytes, over the 5242880-byte limit" % (idx, size),
                              "size": size, "limit": 5242880, "index": idx})
    out = per_image
    if chars > 8000:
        out.append({"code": "text_offloaded", "message": "the result's text is %d characters: over 8000 the platform offloads it "
                    "and the model sees a pointer and a preview" % chars, "size": chars, "limit": 8000})
    if count > 8:
        out.append({"code": "too_many_images", "message": "the result has %d images, more than 8" % count, "size": count, "limit": 8})
    if "structuredContent" in r:
        n = _json_len(r["structuredContent"])
        if n > 16000:
            out.append({"code": "structured_dropped", "message": "structuredContent is %d characters of JSON: over 16000 the platform drops it" % n,
                        "size": n, "limit": 16000})
    return {"findings": out}


def check_progress(i, e):
    # The user's setting: 0 reads as the default, 500 ms (the settings
    # table's progress_interval_ms row starts at 1).
    interval = i["interval_ms"] or 500
    # A queue of (time, kind, order, what): a timer's kind 0 sorts before an
    # event's 1, so a timer fires before an event at the same time.
    queue = [(ev["at"], 1, n, ev) for n, ev in enumerate(i["events"])]
    heapq.heapify(queue)
    state = {"top": None, "next_ok": None, "held": None, "done": False, "timer": None}
    answers, sent = [], []

    def emit(t, rep):
        sent.append({"at": t, "progress": rep[0], "total": rep[1], "message": rep[2]})
        state["next_ok"], state["held"], state["timer"] = t + interval, None, None

    while queue:
        t, kind, _, ev = heapq.heappop(queue)
        if kind == 0:
            if ev is state["timer"] and state["held"] is not None and not state["done"]:
                emit(t, state["held"])
            continue
        if "close" in ev:
            state.update(done=True, held=None, timer=None)
            answers.append("closed")
        elif "flush" in ev:
            if state["held"] is not None and not state["done"]:
                emit(t, state["held"])
                answers.append("send")
            else:
                answers.append("none")
        else:
            p, total, msg = ev["report"]
            if state["done"]:
                answers.append("drop:finished")
            elif not (math.isfinite(p) and (total is None or math.isfinite(total))):
                answers.append("drop:not_finite")
            elif state["top"] is not None and not p > state["top"]:
                answers.append("drop:not_increasing")
            else:
                state["top"] = p
                final = total is not None and p >= total
                if final or state["next_ok"] is None or t >= state["next_ok"]:
                    state["done"] = state["done"] or final
                    emit(t, (p, total, msg))
                    answers.append("send")
                else:
                    if state["held"] is None:
                        token = {"timer": True}
                        state["timer"] = token
                        heapq.heappush(queue, (state["next_ok"], 0, len(sent) + len(answers), token))
                    state["held"] = (p, total, msg)
                    answers.append("hold")
    return {"answers": answers, "sent": sent}


CHECKS = {
    "result_limits": check_result_limits,
    "progress": check_progress,
}

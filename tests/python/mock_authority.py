#!/usr/bin/env python3
"""A mock authority speaking meldewerk's authority protocol over HTTP
(docs/testing-integrations.md, "Your own mock authority"), with nothing but Python's standard
library. It plays either kind of authority: one that acknowledges later through its inbox (a
civil registry office, the default) or, with --decide-at-once, one that answers every delivery
with its decision (a reporting system). Start it, point the service at it, dispatch reports:

    python3 mock_authority.py --listen 127.0.0.1:9002
    MELDEWERK_TRANSPORTS__XPERSONENSTAND__URL=http://127.0.0.1:9002 meldewerk serve

It decides by the report id:

    contains "final"   refused at delivery: 422, the report ends FAILURE with that reason
    contains "flaky"   the first delivery attempt answers 503 (the service retries), then accepted
    contains "refuse"  accepted; the acknowledgement is a rejection: FAILURE with its reason
    anything else      accepted; acknowledged with a small PDF receipt: SUCCESS

An acknowledgement reaches the inbox --ack-delay-ms after the acceptance (default 0: at once;
the service finds the report by the message_uuid the acknowledgement names, even before it has
recorded the acceptance). With --decide-at-once the same decision comes in the answer to the
delivery instead (200 with an "outcome"), and the inbox stays empty; a repeat of a decided key
gets the same decision again, marked as a duplicate.

Beyond the protocol it answers GET /deliveries with what it was sent (attempts per report), so
that a test can tell a retry from a first attempt.

It plays a court mailbox too (the protocol's mailbox face, below /mailboxes/{safeId}/messages):
a tester drops a court's message with POST (JSON {"sender": ..., "files": [{"name", "content"}]},
answered 201 with its entry), and the service lists (GET, cursor = list index), fetches (GET
.../{messageId}, recording the first fetch as received_at) and deletes (DELETE) them. Any SAFE-ID
is an account once something was dropped into it; listing another is 403.
"""

import argparse
import base64
import binascii
import json
import sys
import threading
import time
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

PORTAL = "python-mock-standesamt"
FINAL_REASON = "Mock-Standesamt: nicht zuständig"
REFUSAL_REASON = "Mock-Standesamt: Angaben unvollständig"
REQUIRED = ("idempotency_key", "module", "report_id", "message_uuid", "content_type", "body")


def receipt_pdf(report_id, transport_ref):
    """A one-page PDF with a line of text: objects, cross-reference table and trailer, with the
    byte offsets the format wants."""
    text = f"Empfangsbestaetigung (Mock) {report_id} {transport_ref}"
    text = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    stream = f"BT /F1 11 Tf 56 780 Td ({text}) Tj ET".encode("latin-1", "replace")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


class Office:
    """What the mock remembers: deliveries by idempotency key, acknowledgements not yet due, and
    the inbox, a list that only grows, whose index is the cursor."""

    def __init__(self, ack_delay, at_once):
        self.lock = threading.Lock()
        self.ack_delay = ack_delay
        self.at_once = at_once
        self.deliveries = {}
        self.waiting = []
        self.inbox = []

    def deliver(self, delivery):
        """(status, answer) for one delivery."""
        key, report_id = delivery["idempotency_key"], delivery["report_id"]
        with self.lock:
            known = self.deliveries.setdefault(
                key, {"report_id": report_id, "attempts": 0, "transport_ref": None}
            )
            known["attempts"] += 1
            if known["transport_ref"] is not None:
                # A resend of an accepted key: the original answer, nothing new.
                if self.at_once:
                    return 200, dict(known["answer"], duplicate=True)
                return 200, {"transport_ref": known["transport_ref"], "duplicate": True}
            if "final" in report_id:
                return 422, {"error": FINAL_REASON}
            if "flaky" in report_id and known["attempts"] == 1:
                return 503, {"error": "Mock-Standesamt: gerade nicht erreichbar"}
            transport_ref = str(uuid.uuid4())
            known["transport_ref"] = transport_ref
            if "refuse" in report_id:
                ack = {"message_uuid": delivery["message_uuid"], "transport_ref": transport_ref,
                       "status": "rejected", "reason": REFUSAL_REASON}
            else:
                pdf = receipt_pdf(report_id, transport_ref)
                ack = {"message_uuid": delivery["message_uuid"], "transport_ref": transport_ref,
                       "status": "acknowledged", "receipt": base64.b64encode(pdf).decode("ascii"),
                       "receipt_media_type": "application/pdf", "portal": PORTAL}
            if self.at_once:
                outcome = {k: v for k, v in ack.items() if k not in ("message_uuid", "transport_ref")}
                known["answer"] = {"transport_ref": transport_ref, "outcome": outcome}
                return 200, dict(known["answer"], duplicate=False)
            self.waiting.append((time.monotonic() + self.ack_delay, ack))
            accepted_at = datetime.now(timezone.utc).isoformat()
            return 200, {"transport_ref": transport_ref, "accepted_at": accepted_at,
                         "duplicate": False}

    def acknowledgements(self, cursor, limit):
        """(status, answer) for one inbox fetch."""
        with self.lock:
            # One delay for all, so the waiting list is in due order.
            now = time.monotonic()
            while self.waiting and self.waiting[0][0] <= now:
                self.inbox.append(self.waiting.pop(0)[1])
            start = 0
            if cursor is not None:
                if not cursor.isdigit() or int(cursor) > len(self.inbox):
                    return 410, {"error": f"unknown cursor {cursor!r}"}
                start = int(cursor)
            batch = self.inbox[start:start + limit]
            return 200, {"acknowledgements": batch, "cursor": str(start + len(batch)),
                         "more": start + len(batch) < len(self.inbox)}


class Court:
    """Mailboxes by SAFE-ID: each a list of messages in the order they were dropped (a deleted one
    stays, marked, so that list indexes stay valid cursors)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.accounts = {}

    def drop(self, safe_id, body):
        files = body.get("files") if isinstance(body, dict) else None
        if not isinstance(body.get("sender"), str) or not isinstance(files, list) or not files:
            return 400, {"error": 'a drop is {"sender": "<SAFE-ID>", "files": [...]}'}
        try:
            size = sum(len(base64.b64decode(f["content"], validate=True)) for f in files)
        except (KeyError, TypeError, binascii.Error) as e:
            return 400, {"error": f"files must be name and base64 content: {e}"}
        entry = {"message_id": str(uuid.uuid4()), "direction": "INCOMING",
                 "created_at": datetime.now(timezone.utc).isoformat(), "received_at": None,
                 "size": size}
        with self.lock:
            self.accounts.setdefault(safe_id, []).append(
                {"entry": entry, "sender": body["sender"], "files": files, "deleted": False})
        return 201, entry

    def listing(self, safe_id, cursor, limit):
        with self.lock:
            if safe_id not in self.accounts:
                return 403, {"error": f"{safe_id} is no account of this mock"}
            messages = self.accounts[safe_id]
            start = 0
            if cursor is not None:
                if not cursor.isdigit() or int(cursor) > len(messages):
                    return 410, {"error": f"unknown cursor {cursor!r}"}
                start = int(cursor)
            page, end = [], start
            while end < len(messages) and len(page) < limit:
                if not messages[end]["deleted"]:
                    page.append(messages[end]["entry"])
                end += 1
            more = any(not m["deleted"] for m in messages[end:])
            return 200, {"messages": page, "cursor": str(end) if end or cursor else None,
                         "more": more}

    def message(self, safe_id, message_id, delete):
        with self.lock:
            if safe_id not in self.accounts:
                return 403, {"error": f"{safe_id} is no account of this mock"}
            found = [m for m in self.accounts[safe_id]
                     if m["entry"]["message_id"] == message_id and not m["deleted"]]
            if delete:
                for m in found:
                    m["deleted"] = True
                return 200, {"deleted": bool(found)}
            if not found:
                return 404, {"error": "no such message"}
            m = found[0]
            if m["entry"]["received_at"] is None:
                m["entry"]["received_at"] = datetime.now(timezone.utc).isoformat()
            return 200, dict(m["entry"], sender=m["sender"], recipient=safe_id, files=m["files"])


OFFICE = None
COURT = Court()


def mailbox_path(path):
    """(safeId, messageId or None) of a /mailboxes/{safeId}/messages[/{messageId}] path."""
    parts = [unquote(p) for p in path.split("/")]
    if len(parts) in (4, 5) and parts[:2] == ["", "mailboxes"] and parts[3] == "messages":
        return parts[2], (parts[4] if len(parts) == 5 else None)
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, body):
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        mailbox = mailbox_path(urlsplit(self.path).path)
        if mailbox and mailbox[1] is None:
            try:
                return self.answer(*COURT.drop(mailbox[0], json.loads(raw)))
            except ValueError as e:
                return self.answer(400, {"error": f"not JSON: {e}"})
        if urlsplit(self.path).path != "/deliveries":
            return self.answer(404, {"error": "not found"})
        try:
            delivery = json.loads(raw)
            missing = [name for name in REQUIRED if not isinstance(delivery.get(name), str)]
            if missing:
                return self.answer(400, {"error": f"missing: {', '.join(missing)}"})
            base64.b64decode(delivery["body"], validate=True)
        except (ValueError, binascii.Error) as e:
            return self.answer(400, {"error": f"not a delivery: {e}"})
        self.answer(*OFFICE.deliver(delivery))

    def do_GET(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path == "/acknowledgements":
            cursor = query.get("cursor", [None])[0]
            try:
                limit = int(query.get("limit", ["100"])[0])
            except ValueError:
                return self.answer(400, {"error": "limit must be a whole number"})
            return self.answer(*OFFICE.acknowledgements(cursor, max(1, min(limit, 1000))))
        if url.path == "/deliveries":
            with OFFICE.lock:
                return self.answer(200, list(OFFICE.deliveries.values()))
        mailbox = mailbox_path(url.path)
        if mailbox and mailbox[1] is None:
            try:
                limit = int(query.get("limit", ["100"])[0])
            except ValueError:
                return self.answer(400, {"error": "limit must be a whole number"})
            cursor = query.get("cursor", [None])[0]
            return self.answer(*COURT.listing(mailbox[0], cursor, max(1, min(limit, 1000))))
        if mailbox:
            return self.answer(*COURT.message(mailbox[0], mailbox[1], delete=False))
        self.answer(404, {"error": "not found"})

    def do_DELETE(self):
        mailbox = mailbox_path(urlsplit(self.path).path)
        if mailbox and mailbox[1] is not None:
            return self.answer(*COURT.message(mailbox[0], mailbox[1], delete=True))
        self.answer(404, {"error": "not found"})

    def log_message(self, format, *args):
        sys.stderr.write("mock authority: " + (format % args) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", default="127.0.0.1:9002", help="host:port (port 0: any free)")
    parser.add_argument("--ack-delay-ms", type=int, default=0,
                        help="time from acceptance to the acknowledgement in the inbox")
    parser.add_argument("--decide-at-once", action="store_true",
                        help="answer every delivery with the decision instead of acknowledging later")
    args = parser.parse_args()
    global OFFICE
    OFFICE = Office(args.ack_delay_ms / 1000, args.decide_at_once)
    host, _, port = args.listen.rpartition(":")
    server = ThreadingHTTPServer((host, int(port)), Handler)
    server.daemon_threads = True
    bound_host, bound_port = server.server_address[:2]
    print(f"mock authority listening on http://{bound_host}:{bound_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

"""What the fake model servers share: the text of a request, JSON and SSE
replies, a request log, and serving on a free port of 127.0.0.1 (written to
the port file given on the command line, the log file after it).

With $FAKE_FAIL set (429, 529, 503 or `drop`), the first $FAKE_FAIL_TIMES
model requests (default 1) fail that way before any is answered: an HTTP
error in the provider's own shape (`Retry-After: $FAKE_RETRY_AFTER` when
set), or, for `drop`, the connection closed without a reply. With
$FAKE_FAIL_UNTIL (a path) instead of a count, every model request fails
until that file exists. Each failure is logged as `{"failed": ...}`."""
import json
import os
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FEEDBACK = os.environ.get("FAKE_FEEDBACK", "already failing on the base")
WRONG_CMD = os.environ.get("FAKE_WRONG_CMD", "true")
RIGHT_CMD = os.environ.get("FAKE_RIGHT_CMD", "true")
LOG = sys.argv[2] if len(sys.argv) > 2 else os.devnull
FAIL = os.environ.get("FAKE_FAIL", "")
FAIL_TIMES = int(os.environ.get("FAKE_FAIL_TIMES", "1"))
RETRY_AFTER = os.environ.get("FAKE_RETRY_AFTER", "")
FAIL_UNTIL = os.environ.get("FAKE_FAIL_UNTIL", "")
_failed = [0]
_lock = threading.Lock()

# What each provider's API answers with each status, in its own shape.
ERRORS = {
    "anthropic": {
        429: {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}},
        529: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        503: {"type": "error", "error": {"type": "api_error", "message": "Service Unavailable"}},
    },
    "openai": {
        429: {"error": {"message": "Rate limit reached for requests", "type": "requests", "param": None, "code": "rate_limit_exceeded"}},
        529: {"error": {"message": "The server is overloaded", "type": "server_error", "param": None, "code": None}},
        503: {"error": {"message": "The server is overloaded or not ready yet.", "type": "server_error", "param": None, "code": None}},
    },
    "gemini": {
        429: {"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED"}},
        529: {"error": {"code": 529, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}},
        503: {"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}},
    },
}


def texts(x, out=None):
    """Every string inside `x` (messages, parts, contents), joined by lines."""
    out = [] if out is None else out
    if isinstance(x, str):
        out.append(x)
    elif isinstance(x, list):
        for y in x:
            texts(y, out)
    elif isinstance(x, dict):
        for y in x.values():
            texts(y, out)
    return "\n".join(out)


def log(entry):
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


class Base(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        try:
            return json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            return {}

    def failing(self, provider):
        """Whether this request is one $FAKE_FAIL makes fail; if so, it has
        been failed (an error answered, or the connection dropped)."""
        if not FAIL:
            return False
        with _lock:
            if FAIL_UNTIL:
                if os.path.exists(FAIL_UNTIL):
                    return False
            elif _failed[0] >= FAIL_TIMES:
                return False
            _failed[0] += 1
        log({"failed": FAIL, "path": self.path})
        if FAIL == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return True
        code = int(FAIL)
        data = json.dumps(ERRORS[provider][code]).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if RETRY_AFTER:
            self.send_header("Retry-After", RETRY_AFTER)
        self.end_headers()
        self.wfile.write(data)
        return True

    def json(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def sse(self, chunks):
        """A server-sent event stream of ready-made `event:`/`data:` chunks."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for c in chunks:
            self.wfile.write(c.encode())
        self.wfile.flush()
        self.close_connection = True


def serve(handler):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()

#!/usr/bin/env python3
"""A fake Anthropic Messages API on 127.0.0.1 for the Claude Code test.

    python3 fake_anthropic.py PORT_FILE LOG_FILE

Answers POST /v1/messages (streaming or not). The main agent loop (a
request that offers the Bash tool) gets one Bash call running
$FAKE_WRONG_CMD, or $FAKE_RIGHT_CMD when the request carries $FAKE_FEEDBACK
(the check's failure that only the retry prompt carries); a request holding
that tool's result gets a final text; any other request a short text.

With $FAKE_MCP set, the main loop uses retry-run's self-check tool
(mcp__retry-run__run_checks): a wrong edit, a self-check, the right edit,
another self-check, then a final text; the answer of each self-check is
logged as `self_check`.
"""
import json
import os

from fake_common import FEEDBACK, RIGHT_CMD, WRONG_CMD, Base, log, serve, texts


def has_tool_result(body):
    msgs = body.get("messages", [])
    content = msgs[-1].get("content") if msgs else None
    return isinstance(content, list) and any(isinstance(c, dict) and c.get("type") == "tool_result" for c in content)


MCP_TOOL = "mcp__retry-run__run_checks"


def tool_uses(body):
    """The tool calls the conversation holds so far."""
    return [c for m in body.get("messages", []) if m.get("role") == "assistant" and isinstance(m.get("content"), list)
            for c in m["content"] if isinstance(c, dict) and c.get("type") == "tool_use"]


def self_checking(body, tools):
    """With $FAKE_MCP: a wrong edit, a self-check, the right edit, another
    self-check, then done; each self-check's answer is logged."""
    step = len(tool_uses(body))
    last = texts(body["messages"][-1].get("content")) if step else ""
    if step in (2, 4):
        log({"self_check": last, "tools": tools})
    if step in (0, 2):
        cmd = WRONG_CMD if step == 0 else RIGHT_CMD
        return [{"type": "tool_use", "id": f"toolu_fake_{step}", "name": "Bash",
                 "input": {"command": cmd, "description": "edit the code"}}], "tool_use"
    if step in (1, 3):
        return [{"type": "tool_use", "id": f"toolu_fake_{step}", "name": MCP_TOOL, "input": {}}], "tool_use"
    return [{"type": "text", "text": "The self-check passed; done."}], "end_turn"


def reply(body):
    """(content blocks, stop reason)"""
    tools = [t.get("name") for t in body.get("tools", []) if isinstance(t, dict)]
    if os.environ.get("FAKE_MCP") and "Bash" in tools:
        return self_checking(body, tools)
    if "Bash" in tools and not has_tool_result(body):
        cmd = RIGHT_CMD if FEEDBACK in texts(body.get("messages", [])) else WRONG_CMD
        return [{"type": "tool_use", "id": "toolu_fake_1", "name": "Bash",
                 "input": {"command": cmd, "description": "edit the code"}}], "tool_use"
    if has_tool_result(body):
        return [{"type": "text", "text": "I changed calc.py; the tests should pass now."}], "end_turn"
    return [{"type": "text", "text": "ok"}], "end_turn"


class Handler(Base):
    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.body()
        if "count_tokens" in self.path:
            return self.json({"input_tokens": 10})
        if not self.path.startswith("/v1/messages"):
            return self.json({})
        if self.failing("anthropic"):
            return
        blocks, stop = reply(body)
        log({"path": self.path, "stream": body.get("stream", False), "answer": stop,
             "feedback": FEEDBACK in texts(body.get("messages", []))})
        usage = {"input_tokens": 1200, "output_tokens": 80, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        msg = {"id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
               "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            return self.json(msg)
        events = [("message_start", {"type": "message_start",
                                     "message": dict(msg, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))})]
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": b["text"]}
            else:
                start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
            events += [("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}),
                       ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
                       ("content_block_stop", {"type": "content_block_stop", "index": i})]
        events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": usage["output_tokens"]}}),
                   ("message_stop", {"type": "message_stop"})]
        self.sse(f"event: {k}\ndata: {json.dumps(d)}\n\n" for k, d in events)


if __name__ == "__main__":
    serve(Handler)

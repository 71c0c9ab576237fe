#!/usr/bin/env python3
"""A fake OpenAI API on 127.0.0.1 for agent tests: chat completions (Aider;
opencode, with its `bash` tool) and the streaming Responses API (Codex).

    python3 fake_openai.py PORT_FILE LOG_FILE

Listens on a free port (written to PORT_FILE), answers POST
/v1/chat/completions (streaming or not) and logs one JSON line per request
to LOG_FILE. The answer is Aider's "whole" edit format: the file named by
$FAKE_FILE with the content $FAKE_WRONG, or $FAKE_RIGHT when the request's
text contains $FAKE_FEEDBACK (the check's failure that only the retry
prompt carries).

POST /v1/responses (Codex) answers a request without a tool's output with
one call of its `exec_command` tool running $FAKE_WRONG_CMD, or
$FAKE_RIGHT_CMD when the request carries $FAKE_FEEDBACK; a request holding
the tool's output gets a final message. With $FAKE_MCP set, it uses
retry-run's self-check tool instead: a wrong edit, a call of run_checks (in
the `mcp__retry_run` namespace), the right edit, another call, then a final
message; the answer of each call is logged as `self_check`.
"""
import json
import os
import time

from fake_common import FEEDBACK, RIGHT_CMD, WRONG_CMD, Base, log, serve, texts

FILE = os.environ.get("FAKE_FILE", "calc.py")
WRONG = os.environ.get("FAKE_WRONG", "")
RIGHT = os.environ.get("FAKE_RIGHT", "")


def text_of(body):
    return texts(body.get("messages", []))


class Handler(Base):
    def do_GET(self):
        self.json({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    def do_POST(self):
        body = self.body()
        if self.failing("openai"):
            return
        if self.path.startswith("/v1/responses"):
            return self.answer_responses(body)
        feedback = FEEDBACK in text_of(body)
        tools = [t.get("function", {}).get("name") for t in body.get("tools", []) if isinstance(t, dict)]
        if "bash" in tools:
            return self.chat_tools(body, feedback)
        content = f"{FILE}\n```\n{RIGHT if feedback else WRONG}```\n"
        log({"path": self.path, "stream": bool(body.get("stream")), "feedback": feedback})
        usage = {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940}
        if not body.get("stream"):
            return self.json({"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                              "model": body.get("model", "fake"),
                              "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                           "finish_reason": "stop"}], "usage": usage})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model", "fake")}
        for chunk in ({"role": "assistant", "content": content}, {}):
            data = dict(base, choices=[{"index": 0, "delta": chunk, "finish_reason": None if chunk else "stop"}])
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
        self.wfile.write(f"data: {json.dumps(dict(base, choices=[], usage=usage))}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()
        self.close_connection = True

    def chat_tools(self, body, feedback):
        """opencode: one call of its `bash` tool, then a final text."""
        answered = any(m.get("role") == "tool" for m in body.get("messages", []) if isinstance(m, dict))
        user = [m for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "user"]
        feedback = FEEDBACK in text_of({"messages": user})
        log({"path": self.path, "feedback": feedback, "answered": answered, "tools": True})
        usage = {"prompt_tokens": 800, "completion_tokens": 50, "total_tokens": 850}
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model", "fake")}
        if os.environ.get("FAKE_MCP"):
            names = [t.get("function", {}).get("name") for t in body.get("tools", []) if isinstance(t, dict)]
            deltas = self.chat_self_checking(body, names)
        elif answered:
            deltas = [({"role": "assistant", "content": "I edited calc.py."}, None), ({}, "stop")]
        else:
            args = json.dumps({"command": RIGHT_CMD if feedback else WRONG_CMD, "description": "edit the code"})
            call = {"index": 0, "id": "call_fake", "type": "function", "function": {"name": "bash", "arguments": args}}
            deltas = [({"role": "assistant", "content": None, "tool_calls": [call]}, None), ({}, "tool_calls")]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for delta, finish in deltas:
            data = dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
        self.wfile.write(f"data: {json.dumps(dict(base, choices=[], usage=usage))}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()
        self.close_connection = True

    def chat_self_checking(self, body, tools):
        """opencode with $FAKE_MCP: a wrong edit with its `bash` tool, a
        self-check (retry-run_run_checks), the right edit, another
        self-check, then done; each self-check's answer is logged."""
        msgs = [m for m in body.get("messages", []) if isinstance(m, dict)]
        step = sum(len(m.get("tool_calls") or []) for m in msgs if m.get("role") == "assistant")
        if step in (2, 4):
            log({"self_check": texts(msgs[-1].get("content")), "tools": tools})
        if step >= 4:
            return [({"role": "assistant", "content": "The self-check passed; done."}, None), ({}, "stop")]
        if step in (0, 2):
            name, args = "bash", {"command": WRONG_CMD if step == 0 else RIGHT_CMD, "description": "edit the code"}
        else:
            name, args = "retry-run_run_checks", {}
        call = {"index": 0, "id": f"call_fake_{step}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}
        return [({"role": "assistant", "content": None, "tool_calls": [call]}, None), ({}, "tool_calls")]

    def self_checking(self, body):
        """With $FAKE_MCP: a wrong edit, a self-check (retry-run's
        run_checks, in the namespace Codex lists its tools under), the
        right edit, another self-check, then done; each self-check's answer
        is logged."""
        items = [i for i in body.get("input", []) if isinstance(i, dict)]
        step = sum(1 for i in items if i.get("type") == "function_call")
        namespaces = [t.get("name") for t in body.get("tools", []) if isinstance(t, dict) and t.get("type") == "namespace"]
        if step in (2, 4):
            outputs = [i for i in items if i.get("type") == "function_call_output"]
            log({"self_check": texts(outputs[-1].get("output")) if outputs else "", "namespaces": namespaces})
        if step in (0, 2):
            cmd = WRONG_CMD if step == 0 else RIGHT_CMD
            return {"type": "function_call", "id": f"fc_fake_{step}", "call_id": f"call_fake_{step}",
                    "name": "exec_command", "arguments": json.dumps({"cmd": cmd}), "status": "completed"}
        if step in (1, 3):
            return {"type": "function_call", "id": f"fc_fake_{step}", "call_id": f"call_fake_{step}",
                    "namespace": "mcp__retry_run", "name": "run_checks", "arguments": "{}", "status": "completed"}
        return {"type": "message", "role": "assistant", "id": "msg_fake", "status": "completed",
                "content": [{"type": "output_text", "text": "The self-check passed; done.", "annotations": []}]}

    def answer_responses(self, body):
        items = body.get("input", [])
        answered = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)
        feedback = FEEDBACK in texts([i for i in items if isinstance(i, dict) and i.get("role") == "user"])
        log({"path": self.path, "feedback": feedback, "answered": answered})
        if os.environ.get("FAKE_MCP"):
            item = self.self_checking(body)
        elif answered:
            item = {"type": "message", "role": "assistant", "id": "msg_fake", "status": "completed",
                    "content": [{"type": "output_text", "text": "I edited calc.py.", "annotations": []}]}
        else:
            cmd = RIGHT_CMD if feedback else WRONG_CMD
            item = {"type": "function_call", "id": "fc_fake", "call_id": "call_fake", "name": "exec_command",
                    "arguments": json.dumps({"cmd": cmd}), "status": "completed"}
        usage = {"input_tokens": 1500, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 60, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 1560}
        resp = {"id": "resp_fake", "object": "response", "created_at": int(time.time()), "status": "completed",
                "model": body.get("model", "fake"), "output": [item], "usage": usage}
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for ev in ({"type": "response.created", "response": dict(resp, status="in_progress", output=[])},
                   {"type": "response.output_item.added", "output_index": 0, "item": item},
                   {"type": "response.output_item.done", "output_index": 0, "item": item},
                   {"type": "response.completed", "response": resp}):
            self.wfile.write(f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


if __name__ == "__main__":
    serve(Handler)

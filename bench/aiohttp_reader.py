"""Reference reader for bench/client-yardstick.ts: an aiohttp client timed like `vllm bench serve`.

The timing follows vLLM's `async_request_openai_chat_completions` and `StreamedResponseHandler`
(vllm/benchmarks/lib/endpoint_request_func.py): read `response.content.iter_any()`, split the
decoded text on blank lines, stamp `time.perf_counter()` per SSE message before `json.loads`,
TTFT at the first chunk with non-empty `choices`, then one ITL per later such chunk (the gap to
the previous one). Written here, not imported: vLLM is not installed on the bench machine.
Deviation: the session is opened and every connection warmed before the timed pass, so connects
are not in the figures (LoadLab's readers are warmed the same way).

Usage: /usr/bin/python3 bench/aiohttp_reader.py '<json>' with base_url, model, streams, tokens,
gap_ms, prefix. Prints one JSON line: cpu_s (getrusage user+sys over the timed pass), sys_s (its system part),
process_cpu_s (the whole process, start-up included), wall_s, events, itl_ms, ok, errors.
"""

import asyncio
import codecs
import json
import resource
import sys
import time

import aiohttp


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def sys_s() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime


def split_messages(state: dict, data: bytes) -> list:
    """Complete SSE messages in `data` plus what was buffered (vLLM's StreamedResponseHandler logic)."""
    state["buf"] += state["dec"].decode(data)
    out = []
    while "\n\n" in state["buf"]:
        msg, state["buf"] = state["buf"].split("\n\n", 1)
        msg = msg.strip()
        if msg:
            out.append(msg)
    rest = state["buf"]
    if rest.startswith("data: "):
        body = rest[len("data: "):].strip()
        if body == "[DONE]":
            out.append(rest.strip())
            state["buf"] = ""
        elif body:
            try:
                json.loads(body)
                out.append(rest.strip())
                state["buf"] = ""
            except json.JSONDecodeError:
                pass
    return out


async def one(session, url, payload, headers, itl: list) -> int:
    """One streamed request; returns the number of chunks with choices."""
    st = time.perf_counter()
    last = st
    n = 0
    async with session.post(url=url, json=payload, headers=headers) as resp:
        if resp.status != 200:
            raise RuntimeError(f"HTTP {resp.status}")
        state = {"buf": "", "dec": codecs.getincrementaldecoder("utf-8")()}
        async for data in resp.content.iter_any():
            data = data.strip()
            if not data:
                continue
            for msg in split_messages(state, data):
                if msg.startswith(":"):
                    continue
                chunk = msg[len("data: "):] if msg.startswith("data: ") else msg
                if chunk == "[DONE]":
                    continue
                ts = time.perf_counter()
                obj = json.loads(chunk)
                if obj.get("choices"):
                    if n > 0:
                        itl.append((ts - last) * 1000)
                    n += 1
                    last = ts
    return n


async def main(cfg: dict) -> dict:
    url = cfg["base_url"] + "/v1/chat/completions"
    streams = cfg["streams"]
    conn = aiohttp.TCPConnector(limit=streams)
    timeout = aiohttp.ClientTimeout(total=6 * 60 * 60)

    def body(tokens, gap):
        return {
            "model": cfg["model"],
            "messages": [{"role": "user", "content": "hi"}],
            "max_completion_tokens": tokens,
            "max_tokens": tokens,  # the null server reads max_tokens only
            "stream": True,
            "stream_options": {"include_usage": True},
            "null_gap_ms": gap,
        }

    async with aiohttp.ClientSession(connector=conn, timeout=timeout) as session:
        warm = [one(session, url, body(1, 0), {"x-request-id": f"aw-{i}"}, []) for i in range(streams)]
        await asyncio.gather(*warm)
        itl: list = []
        c0, s0, w0 = cpu_s(), sys_s(), time.perf_counter()
        jobs = [
            one(session, url, body(cfg["tokens"], cfg["gap_ms"]), {"x-request-id": f"{cfg['prefix']}-{i}"}, itl)
            for i in range(streams)
        ]
        res = await asyncio.gather(*jobs, return_exceptions=True)
        c1, s1, w1 = cpu_s(), sys_s(), time.perf_counter()
    errors = [str(r) for r in res if isinstance(r, BaseException)]
    return {
        "cpu_s": c1 - c0,
        "sys_s": s1 - s0,
        "wall_s": w1 - w0,
        "events": sum(r for r in res if isinstance(r, int)),
        "ok": streams - len(errors),
        "errors": errors[:3],
        "itl_ms": itl,
        "process_cpu_s": cpu_s(),
    }


if __name__ == "__main__":
    out = asyncio.run(main(json.loads(sys.argv[1])))
    sys.stdout.write(json.dumps(out) + "\n")

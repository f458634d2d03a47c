"""Peer host: Python's asyncio subprocess, the way a Python user would host a line-delimited JSON-RPC child.

    python3 host.py COUNT PIPELINED WINDOW -- CHILD COMMAND...

Prints {"samples":[ns,...],"pipelinedNs":N}: COUNT sequential `$/ping` round trips, then PIPELINED requests with
WINDOW in flight (WINDOW workers, each awaiting its answer before sending the next), as switchyard-bench's burst does.
"""
import asyncio
import itertools
import json
import sys
import time


async def main() -> None:
    count, pipelined, window = (int(value) for value in sys.argv[1:4])
    command = sys.argv[sys.argv.index("--") + 1:]
    child = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    loop = asyncio.get_running_loop()
    pending: dict[int, asyncio.Future] = {}
    ids = itertools.count(1)

    async def read() -> None:
        async for line in child.stdout:
            message = json.loads(line)
            pending.pop(message["id"]).set_result(message.get("result"))

    reader = asyncio.create_task(read())

    async def request(method: str, params: dict) -> object:
        request_id = next(ids)
        future = loop.create_future()
        pending[request_id] = future
        child.stdin.write((json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n").encode())
        await child.stdin.drain()
        return await future

    samples = []
    for _ in range(count):
        start = time.perf_counter_ns()
        await request("$/ping", {})
        samples.append(time.perf_counter_ns() - start)

    unsent = pipelined

    async def worker() -> None:
        nonlocal unsent
        while unsent > 0:
            unsent -= 1
            await request("$/ping", {})

    start = time.perf_counter_ns()
    await asyncio.gather(*(worker() for _ in range(window)))
    pipelined_ns = time.perf_counter_ns() - start
    child.stdin.close()
    await reader
    await child.wait()
    print(json.dumps({"samples": samples, "pipelinedNs": pipelined_ns}))


asyncio.run(main())

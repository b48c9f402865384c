"""A test bot that misbehaves on purpose, one way per bundle (argv[1]). It uses the generated stubs
directly, because the SDK would not let it break the protocol.

  crash        plays one move, then dies on its second turn with exit code 3
  leaky        like crash, but first puts a secret marker in a Log line and on stderr (privacy tests)
  illegal      answers its first turn with a card that is not in its hand
  sleeper      joins and never answers
  disconnect   closes its stream on its first turn but keeps the process running
  notacard     answers with "XX"
  secondjoin   sends a second Join on its stream
  stale        answers every turn first with a wrong turn id, then correctly (a legal bot)
  nojoin       never connects
  exitearly    exits before joining
  banker       takes move + 0.1 s on its first two moves (draws on the bank), then plays fast
  spammer      sends 3000 long Log lines, then plays like `stale` without the stale part
  deaf         joins and never reads its stream again (a tiny HTTP/2 receive window, so the
               referee's writes stall at once instead of filling buffers)
  oversize     answers its first turn with an Action just over the referee's 16 KiB cap (16 KiB + 512)
  chatty       a legal bot that writes 100 KiB to stdout at its Welcome, then a line to stdout and
               one to stderr on every turn (the output kept in the record, and its cap)
  huge         answers its first turn with a 1 MiB + 1 KiB Action (over the bot socket's gRPC receive
               limit, so gRPC refuses it), then dies of the stream error like an SDK bot would
"""

import os
import queue
import sys
import time

import grpc

from arena.proto import referee_pb2 as pb
from arena.proto import referee_pb2_grpc as pbg

mode = sys.argv[1]

if mode == "nojoin":
    time.sleep(60)
    sys.exit(0)
if mode == "exitearly":
    print("exitearly: giving up before joining", file=sys.stderr, flush=True)
    sys.exit(2)

out = queue.SimpleQueue()
out.put(pb.BotMessage(join=pb.Join(token=os.environ["ARENA_TOKEN"], bot_name=mode, protocol_version=1)))
options = [("grpc.http2.lookahead_bytes", 1), ("grpc.http2.bdp_probe", 0)] if mode == "deaf" else []
channel = grpc.insecure_channel(os.environ["ARENA_ADDRESS"], options=options)
responses = pbg.RefereeStub(channel).Play(iter(out.get, None), wait_for_ready=True)
if mode == "deaf":
    time.sleep(120)
turns = 0
for msg in responses:
    kind = msg.WhichOneof("msg")
    if kind == "welcome" and mode == "secondjoin":
        out.put(pb.BotMessage(join=pb.Join(token=os.environ["ARENA_TOKEN"], protocol_version=1)))
    if kind == "welcome" and mode == "leaky":
        out.put(pb.BotMessage(log=pb.Log(text="log says api_key=LEAK-7f3a9c")))
    if kind == "welcome" and mode == "spammer":
        for i in range(3000):
            out.put(pb.BotMessage(log=pb.Log(text=f"line {i} " + "x" * 3000)))
    if kind == "welcome" and mode == "chatty":
        for i in range(1000):
            print(f"flood {i:04d} " + "x" * 89, flush=False)
        sys.stdout.flush()
    if kind == "match_result":
        print("result", list(msg.match_result.verdicts), file=sys.stderr, flush=True)
        break
    if kind != "turn_request":
        continue
    req = msg.turn_request
    turns += 1
    legal = list(req.legal_cards)
    if mode == "chatty":
        print(f"chatty stdout turn {turns}", flush=True)
        print(f"chatty stderr turn {turns}", file=sys.stderr, flush=True)
    if mode in ("crash", "leaky") and turns == 2:
        print("crash: something went badly wrong", file=sys.stderr, flush=True)
        if mode == "leaky":
            print("stderr says api_key=LEAK-7f3a9c", file=sys.stderr, flush=True)
        os._exit(3)
    if mode == "sleeper":
        time.sleep(60)
    if mode == "disconnect":
        channel.close()
        time.sleep(60)
    if mode == "illegal":
        hand = set(req.view.hand)
        card = next(r + s for s in "CDHS" for r in "789TJQKA" if r + s not in hand)
        out.put(pb.BotMessage(action=pb.Action(turn_id=req.turn_id, card=card)))
        continue
    if mode in ("huge", "oversize"):
        size = (1 << 20) + 1024 if mode == "huge" else 16 * 1024 + 512
        out.put(pb.BotMessage(action=pb.Action(turn_id=req.turn_id, card="A" * size)))
        continue
    if mode == "notacard":
        out.put(pb.BotMessage(action=pb.Action(turn_id=req.turn_id, card="XX")))
        continue
    if mode == "stale":
        out.put(pb.BotMessage(action=pb.Action(turn_id=req.turn_id + 1000, card=legal[0])))
    if mode == "banker" and turns <= 2:
        time.sleep(req.move_ms / 1000 + 0.1)
    out.put(pb.BotMessage(action=pb.Action(turn_id=req.turn_id, card=legal[0])))
out.put(None)

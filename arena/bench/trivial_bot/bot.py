"""The trivial bot of `arena bench referee`: the SDK's View, then the first legal card. The bench's
bare ping-pong client does exactly the same work per message, so only the server side differs."""

from arena.sdk import Bot, run


class Trivial(Bot):
    name = "trivial"

    def play(self, view):
        return view.legal[0]


if __name__ == "__main__":
    run(Trivial())

"""Writes one file as large as it can (RLIMIT_FSIZE / the tmpfs cap stop it)."""

from arena.sdk import Bot, run


class DiskHuge(Bot):
    def play(self, view):
        written = 0
        with open("/tmp/huge", "wb") as fh:
            block = b"y" * (1 << 20)
            while True:
                try:
                    fh.write(block)
                    fh.flush()
                except OSError:
                    print(f"disk_huge wrote {written} bytes", flush=True)
                    raise
                written += len(block)


run(DiskHuge())

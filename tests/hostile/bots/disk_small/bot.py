"""Fills every writable place it can find with many small files, then dies of the first refusal."""

from arena.sdk import Bot, run


class DiskSmall(Bot):
    def play(self, view):
        written = 0
        for i in range(10**7):
            try:
                with open(f"/tmp/f{i}", "wb") as fh:
                    fh.write(b"x" * 4096)
            except OSError:
                print(f"disk_small wrote {written} bytes", flush=True)
                raise
            written += 4096


run(DiskSmall())

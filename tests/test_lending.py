"""What a guide's work reads is let go of after the block that lent it, once: a block inside
another (a page's record verified while the page is drawn) leaves it to the outer one."""

from __future__ import annotations

from site_builder.runtime.lending import lent


class Part:
    """A part read when first asked, counting its reads."""

    def __init__(self) -> None:
        self.held, self.reads = False, 0

    def get(self) -> None:
        if not self.held:
            self.held, self.reads = True, self.reads + 1

    def release(self) -> None:
        self.held = False


def test_a_part_read_in_a_block_is_let_go_of_after_it() -> None:
    part = Part()
    with lent(part):
        part.get()
        assert part.held
    assert not part.held


def test_a_part_held_before_the_block_stays_held() -> None:
    part = Part()
    part.get()
    with lent(part):
        part.get()
    assert part.held and part.reads == 1


def test_a_block_inside_another_leaves_the_part_to_the_outer_one() -> None:
    part = Part()
    with lent(part):
        with lent(part):  # verifying the record
            part.get()
        assert part.held  # still there for the page
        part.get()
    assert not part.held and part.reads == 1
    with lent(part):  # and the next guide's block reads and lets go again
        part.get()
    assert not part.held and part.reads == 2

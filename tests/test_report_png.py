"""The report's PNG encoder (``reporting/_png.py``): exact pixels, resolution and text chunk, read back by Pillow
(an independent PNG decoder), and the figures of ``_render._png`` decoded equal to Agg's own buffer."""

from __future__ import annotations

import io
import zlib

import numpy as np
import pytest
from PIL import Image

from isoeat.reporting._png import png_bytes


def _decode(data: bytes) -> Image.Image:
    im = Image.open(io.BytesIO(data))
    im.load()  # checks every chunk's CRC and the zlib stream
    return im


@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (5, 1), (37, 53)])
def test_pixels_exact(shape: tuple[int, int]) -> None:
    # random bytes: every difference between rows wraps around mod 256 somewhere
    rgb = np.random.default_rng(0).integers(0, 256, size=(*shape, 3), dtype=np.uint8)
    im = _decode(png_bytes(rgb, 150))
    assert im.mode == "RGB" and im.size == (shape[1], shape[0])
    assert np.array_equal(np.asarray(im), rgb)


def test_strided_view_of_rgba() -> None:
    rgba = np.random.default_rng(1).integers(0, 256, size=(20, 30, 4), dtype=np.uint8)
    assert np.array_equal(np.asarray(_decode(png_bytes(rgba[..., :3], 72))), rgba[..., :3])


def test_metadata_as_pillow_wrote_it() -> None:
    rgb = np.zeros((4, 4, 3), np.uint8)
    im = _decode(png_bytes(rgb, 150, "isoeat"))
    assert im.info["Software"] == "isoeat"
    # pHYs: 150 dpi = 5905.5 px/m, rounded to 5906 (Pillow's rule int(dpi / 0.0254 + 0.5)); read back as dpi
    assert im.info["dpi"] == pytest.approx((5906 * 0.0254, 5906 * 0.0254))
    ref = io.BytesIO()
    Image.fromarray(rgb, "RGB").save(ref, format="png", dpi=(150, 150))
    assert _decode(ref.getvalue()).info["dpi"] == im.info["dpi"]


def test_rows_filtered_up() -> None:
    # a flat image: every row after the first is all zeros once filtered, so the stream is tiny
    rgb = np.full((200, 200, 3), 200, np.uint8)
    data = png_bytes(rgb, 100)
    start = data.index(b"IDAT") + 4
    n = int.from_bytes(data[start - 8 : start - 4], "big")
    raw = zlib.decompress(data[start : start + n])
    rows = np.frombuffer(raw, np.uint8).reshape(200, 601)
    assert (rows[:, 0] == 2).all() and (rows[1:, 1:] == 0).all() and (rows[0, 1:] == 200).all()


@pytest.mark.parametrize(
    "bad", [np.zeros((3, 3, 4), np.uint8), np.zeros((3, 3, 3), np.float64), np.zeros((3, 3), np.uint8)]
)
def test_refuses_other_arrays(bad: np.ndarray) -> None:
    with pytest.raises(ValueError, match="height x width x 3 uint8"):
        png_bytes(bad, 100)


def test_render_png_equals_agg_buffer() -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from isoeat.reporting import _render

    fig = Figure(figsize=(2, 1.5), dpi=100)
    ax = fig.add_subplot()
    ax.imshow(np.arange(12.0).reshape(3, 4))
    ax.set_title("cosine")
    data = _render._png(fig, 100)
    expected = np.asarray(fig.canvas.buffer_rgba())[..., :3]  # what Agg drew
    im = _decode(data)
    assert im.size == (200, 150) and np.array_equal(np.asarray(im), expected)

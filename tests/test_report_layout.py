"""Layout of the report: Figure 4's labels do not overlap; (see test_report.py for the page at 1280 px)."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest

# d raw / d ZCA of W1-W10 on GloVe 6B 50d as `isoeat run examples/paper_glove.yaml` measured them (inputs of the
# drawing, not expected values): W4 (0.884, 0.449) and W5 (0.995, 0.468) lie 0.11 apart, W9 (1.137, 1.079) and
# W10 (0.990, 0.973) 0.18 apart, where the fixed offset put W4's label under W5's marker and W9's over W10's.
PAPER_GLOVE = [("W1", "Valence", 1.080, 1.174, "Stable"), ("W2", "Valence", 1.544, 1.457, "Stable"),
               ("W3", "Race", 0.953, 0.620, "Stable"), ("W4", "Race", 0.884, 0.449, "Disappearing"),
               ("W5", "Race", 0.995, 0.468, "Disappearing"), ("W6", "Gender", 1.708, 1.704, "Stable"),
               ("W7", "Gender", 1.495, 1.449, "Stable"), ("W8", "Gender", 1.485, 1.329, "Stable"),
               ("W9", "Health", 1.137, 1.079, "Stable"), ("W10", "Age", 0.990, 0.973, "Stable")]


def _results(rows):
    comps = [{"model": "GloVe", "family": "static", "calibration": "zca", "test": t, "bias_type": b, "d_raw": dr,
              "d_calibrated": dc, "change": ch, "p_raw": 0.001, "p_calibrated": 0.2 if ch == "Disappearing" else 0.001}
             for t, b, dr, dc, ch in rows]
    return SimpleNamespace(models=[{"label": "GloVe", "family": "static"}],
                           tests=[{"id": t, "bias_type": b} for t, b, *_ in rows],
                           calibrations=[{"name": "none", "label": "none"}, {"name": "zca", "label": "zca"}],
                           comparisons=comps, alpha=0.05)


def _boxes(rows):
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    from isoeat.reporting.figures import figure_scatter

    fig = figure_scatter(_results(rows), "zca")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # the figure as saved: constrained layout done, then every artist drawn
    renderer = canvas.get_renderer()
    out = []
    for ax in fig.axes:
        labels = {t.get_text(): Text.get_window_extent(t, renderer) for t in ax.texts}  # the text, not its leader
        coll = [c for c in ax.collections if len(c.get_offsets())]
        markers = [(c.get_window_extent(renderer), tuple(c.get_offsets()[0])) for c in coll]
        if labels:
            out.append((ax, labels, markers))
    return out


def _overlap(a, b):
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 0 and min(a.y1, b.y1) - max(a.y0, b.y0) > 0


def test_figure4_labels_do_not_overlap_each_other_or_other_points():
    panels = _boxes(PAPER_GLOVE)
    assert sorted(t for _, labels, _ in panels for t in labels) == sorted(r[0] for r in PAPER_GLOVE)
    for ax, labels, markers in panels:
        for (na, a), (nb, b) in itertools.combinations(labels.items(), 2):
            assert not _overlap(a, b), (na, nb, a, b)
        for name, box in labels.items():
            row = next(r for r in PAPER_GLOVE if r[0] == name)
            for mbox, (x, y) in markers:  # no label covers any marker (its own included)
                assert not _overlap(box, mbox), (name, (x, y), (row[2], row[3]))
            assert ax.bbox.x0 <= box.x0 and box.x1 <= ax.bbox.x1 and ax.bbox.y0 <= box.y0 and box.y1 <= ax.bbox.y1


def test_figure4_crowded_labels_still_apart():
    # five points 0.02 apart in one panel: a fixed offset stacks all five labels on one another
    rows = [(f"W{i}", "Race", 0.50 + 0.02 * i, 0.50 + 0.02 * i, "Stable") for i in range(1, 6)]
    (ax, labels, markers), = _boxes(rows)
    for (na, a), (nb, b) in itertools.combinations(labels.items(), 2):
        assert not _overlap(a, b), (na, nb)


def test_heatmap_word_labels_sit_on_their_cells():
    """The per-test heatmap's row labels (one multi-line text) are centred on their rows, whatever the count."""
    pytest.importorskip("matplotlib")
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from isoeat.reporting.figures import figure_test_heatmap

    xw, yw, aw, bw = [f"x{i}" for i in range(7)], [f"yy{i}" for i in range(5)], ["a1", "a2", "a3"], ["b1", "b2"]
    rng = np.random.default_rng(0)
    cos = {"X_words": xw, "Y_words": yw, "A_words": aw, "B_words": bw, "X_AB": rng.normal(size=(7, 5)).tolist(),
           "Y_AB": rng.normal(size=(5, 5)).tolist()}
    res = SimpleNamespace(calibrations=[{"name": "none", "label": "none"}], tests=[{"id": "T", "bias_type": "x"}],
                          cosines=lambda model, cal, test: cos)
    fig = figure_test_heatmap(res, "M", "T")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    panels = [ax for ax in fig.axes if ax.images and ax.texts]
    assert len(panels) == 2
    for ax, words in zip(panels, (xw, yw)):
        (rows,) = [t for t in ax.texts if t.get_rotation() == 0]
        assert rows.get_text().split("\n") == words
        _, lines, _ = rows._get_layout(renderer)  # (line, (w, h, d), (x, y): its baseline from the anchor, pixels)
        y0 = rows.get_transform().transform(rows.get_position())[1]
        for k, (_, (w, h, d), (x, y)) in enumerate(lines):
            centre = y0 + y - d + h / 2
            cell = ax.transData.transform([(0, k), (0, k + 1)])[:, 1]  # row k spans k-0.5..k+0.5 in data
            cell_h = abs(cell[1] - cell[0])
            assert abs(centre - ax.transData.transform((0, k))[1]) < 0.25 * cell_h, (words[k], centre, cell)


def _small_heatmap_results():
    import numpy as np

    xw, yw, aw, bw = [f"x{i}" for i in range(7)], [f"yy{i}" for i in range(5)], ["a1", "a2", "a3"], ["b1", "b2"]
    rng = np.random.default_rng(0)
    cos = {"X_words": xw, "Y_words": yw, "A_words": aw, "B_words": bw, "X_AB": rng.normal(size=(7, 5)).tolist(),
           "Y_AB": rng.normal(size=(5, 5)).tolist()}
    return SimpleNamespace(calibrations=[{"name": "none", "label": "none"}], tests=[{"id": "T", "bias_type": "x"}],
                           cosines=lambda model, cal, test: cos)


def test_heatmap_cells_are_whole_pixel_blocks_in_the_pdf():
    """The PDF holds each heatmap panel as its cells, each k x k pixels (k >= 4): not resampled to the page's
    resolution (most of a heatmap's PDF time and size), and a viewer that smooths images blurs no cell into the next."""
    pytest.importorskip("matplotlib")
    import io
    import re

    from isoeat.reporting.figures import figure_test_heatmap

    fig = figure_test_heatmap(_small_heatmap_results(), "M", "T")
    buf = io.BytesIO()
    fig.savefig(buf, format="pdf", dpi=150)
    sizes = [(int(w), int(h)) for w, h in re.findall(rb"/Subtype /Image /Width (\d+) /Height (\d+)", buf.getvalue())]
    panels = [s for s in sizes if s[0] > 2 * 21]  # the colour bar is one narrow image
    assert len(panels) == 2, sizes
    (wx, hx), (wy, hy) = panels
    k = wx // 5
    assert k >= 4 and (wx, hx) == (5 * k, 7 * k) and (wy, hy) == (5 * k, 5 * k), sizes


def test_figures_rendered_in_two_processes_are_the_same_files(tmp_path):
    """ISOEAT_REPORT_JOBS / jobs=2 forks two renderers: the same files, byte for byte, in the plan's order."""
    pytest.importorskip("matplotlib")
    from isoeat.reporting.figures import write_figures

    res = _results(PAPER_GLOVE)
    res.calibrations.append({"name": "zca", "label": "zca2"})
    res.comparisons += [dict(r, calibration="zca2", d_calibrated=r["d_calibrated"] / 2) for r in res.comparisons]
    res.experiment, res.anisotropy = {}, []
    res.heatmap = lambda model, cal: None
    one = write_figures(res, tmp_path / "one", formats=("png", "pdf"), dpi=40, test_heatmaps="none", jobs=1)
    two = write_figures(res, tmp_path / "two", formats=("png", "pdf"), dpi=40, test_heatmaps="none", jobs=2)
    names = [p.relative_to(tmp_path / "one").as_posix() for p in one]
    assert names == ["fig3_effect_sizes-zca.png", "fig3_effect_sizes-zca.pdf", "fig4_scatter-zca.png",
                     "fig4_scatter-zca.pdf", "fig3_effect_sizes-zca2.png", "fig3_effect_sizes-zca2.pdf",
                     "fig4_scatter-zca2.png", "fig4_scatter-zca2.pdf"]
    assert [p.relative_to(tmp_path / "two").as_posix() for p in two] == names
    for a, b in zip(one, two):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_each_figure_is_laid_out_once_and_drawn_once_per_format(tmp_path, monkeypatch):
    """No redundant redraws: one layout per figure (not one per format), one draw per format, nothing else."""
    pytest.importorskip("matplotlib")
    from collections import Counter

    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    from isoeat.reporting.figures import write_figures

    draws, layouts = Counter(), Counter()
    real_draw, real_execute = Figure.draw, ConstrainedLayoutEngine.execute

    def draw(self, renderer):
        draws[id(self)] += 1
        return real_draw(self, renderer)

    def execute(self, fig):
        layouts[id(fig)] += 1
        return real_execute(self, fig)

    monkeypatch.setattr(Figure, "draw", draw)
    monkeypatch.setattr(ConstrainedLayoutEngine, "execute", execute)
    res = _results(PAPER_GLOVE)
    res.experiment, res.anisotropy = {}, []
    res.heatmap = lambda model, cal: None
    rng = np.random.default_rng(0)
    cos = {"X_words": ["x1", "x2", "x3"], "Y_words": ["y1", "y2"], "A_words": ["a1", "a2"], "B_words": ["b1"],
           "X_AB": rng.normal(size=(3, 3)).tolist(), "Y_AB": rng.normal(size=(2, 3)).tolist()}
    res.cosines = lambda model, cal, test: cos
    built = []
    real_init = Figure.__init__

    def init(self, *a, **k):
        built.append(self)
        real_init(self, *a, **k)

    monkeypatch.setattr(Figure, "__init__", init)
    written = write_figures(res, tmp_path, formats=("png", "pdf"), dpi=40, test_heatmaps=["W1"])
    # Figures 3, 4 and one heatmap, each as PNG and PDF; the heatmap (ASCII words) drawn without matplotlib
    assert len(written) == 2 * 3 and len(built) == 2
    for fig in built:
        assert draws[id(fig)] == 2, fig
        assert layouts[id(fig)] <= 1, fig
    assert sum(layouts.values()) == 2  # Figures 3 and 4 have a constrained layout, computed once each


def test_figure2_log_axis_labels_are_plain_text_powers_of_ten():
    """Figure 2's log axis reads 10⁻², 10⁻³ ... as plain text (no mathtext to parse), labels where matplotlib's own
    formatter would put them; the label text is written out by hand here."""
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from isoeat.reporting.figures import _power_label, figure_explained_variance

    assert [_power_label(x) for x in (0.01, 0.002, 1.0, 0.0099999999999, 3e-5, 20.0)] == [
        "10⁻²", "2×10⁻³", "10⁰", "10⁻²", "3×10⁻⁵", "2×10¹"]
    evr = [0.06, 0.04, 0.02, 0.01, 0.004, 0.001, 0.0004, 0.0001]
    res = SimpleNamespace(models=[{"label": "M", "family": "static"}],
                          calibrations=[{"name": "none", "label": "none"}, {"name": "zca", "label": "zca"}],
                          anisotropy=[{"model": "M", "calibration": c, "explained_variance_ratio": evr, "dim": 50,
                                       "top_k": 8} for c in ("none", "zca")])
    fig = figure_explained_variance(res)
    FigureCanvasAgg(fig).draw()
    labels = [t.get_text() for t in fig.axes[0].yaxis.get_ticklabels(which="both") if t.get_visible() and t.get_text()]
    assert labels and not any("$" in t for t in labels), labels
    assert {"10⁻⁴", "10⁻³", "10⁻²"} <= set(labels), labels


def test_figure_rendering_reports_progress(tmp_path, monkeypatch, capsys):
    """Rendering the figures is one progress stage ('isoeat report', figures counted), like every long step;
    --quiet (or progress=False) silences it."""
    pytest.importorskip("matplotlib")
    from isoeat.reporting.figures import write_figures

    res = _results(PAPER_GLOVE)
    res.experiment, res.anisotropy = {}, []
    res.heatmap = lambda model, cal: None
    monkeypatch.setenv("ISOEAT_PROGRESS", "log")
    write_figures(res, tmp_path / "a", formats=("png",), dpi=30, test_heatmaps="none")
    err = capsys.readouterr().err
    assert "isoeat report" in err and "2/2" in err, err  # Figures 3 and 4
    write_figures(res, tmp_path / "b", formats=("png",), dpi=30, test_heatmaps="none", progress=False)
    assert capsys.readouterr().err == ""


def test_heatmap_words_with_dollar_signs_are_drawn_as_written():
    """Words are data: a vocabulary entry such as '$x' next to 'y$' must not turn a label into mathtext (which
    would drop the dollars and set the words in italics); every word label is plain text."""
    pytest.importorskip("matplotlib")
    import numpy as np

    from isoeat.reporting.figures import figure_test_heatmap

    rng = np.random.default_rng(0)
    cos = {"X_words": ["$x", "y$", "z"], "Y_words": ["u_1", "v"], "A_words": ["$a$", "b"], "B_words": ["c"],
           "X_AB": rng.normal(size=(3, 3)).tolist(), "Y_AB": rng.normal(size=(2, 3)).tolist()}
    res = SimpleNamespace(calibrations=[{"name": "none", "label": "none"}], tests=[{"id": "T", "bias_type": "x"}],
                          cosines=lambda model, cal, test: cos)
    fig = figure_test_heatmap(res, "M", "T")
    labels = [t for ax in fig.axes for t in ax.texts if "\n" in t.get_text()]
    assert {t.get_text() for t in labels} >= {"$x\ny$\nz", "$a$\nb\nc"}
    for t in labels:
        assert t._preprocess_math(t.get_text()) == (t.get_text(), False), t.get_text()


def test_user_labels_with_dollar_signs_stay_literal_in_titles(tmp_path):
    """A model label such as '$G$ v$2$' is data too: once a figure is saved, no text that holds a label (titles,
    suptitles, axis labels, annotations) is parsed as mathtext, which would drop the dollars silently."""
    pytest.importorskip("matplotlib")
    from matplotlib.text import Text

    from isoeat.reporting._render import _save
    from isoeat.reporting.figures import figure_scatter, figure_test_heatmap

    label, cal = "$G$ v$2$", "$G$ca"  # a model label (the heatmap's title), a calibration label (the scatter's axis)
    heat = _small_heatmap_results()
    rows = _results(PAPER_GLOVE)
    rows.calibrations = [{"name": "none", "label": "none"}, {"name": "zca", "label": cal}]
    for c in rows.comparisons:
        c["calibration"] = cal
    figs = [figure_test_heatmap(heat, label, "T"), figure_scatter(rows, cal)]
    for k, fig in enumerate(figs):
        _save(fig, tmp_path / f"f{k}", ["png"], 50)
        held = [t for t in fig.findobj(Text) if "$G$" in t.get_text()]
        assert held, f"figure {k} shows the label nowhere"
        for t in held:
            assert t._preprocess_math(t.get_text())[1] is False, t.get_text()

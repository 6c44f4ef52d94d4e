"""Loading hf: and st: model folders never runs code shipped with a model, and never reads stdin.

A model folder whose config.json has an ``auto_map`` points transformers at
its own Python file. Asked without ``trust_remote_code``, transformers would
prompt "Do you wish to run the custom code? [y/N]" on standard input; isoeat
passes ``trust_remote_code=False`` on every load, so the folder is refused
with a one-line :class:`~isoeat.backends._hf.CustomCodeRefusedError`. The
custom file here writes a marker file when it is executed; the fake stdin
answers "y", so any prompt would run it.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import isoeat
from isoeat import DataFormatError, IsoeatError
from isoeat.backends._hf import CustomCodeRefusedError, loading

SRC = Path(isoeat.__file__).resolve().parent

CUSTOM_CODE = '''
from pathlib import Path

Path(MARKER).write_text("custom model code was executed")

from transformers import PretrainedConfig, PreTrainedModel


class CustomConfig(PretrainedConfig):
    model_type = "isoeat-custom"


class CustomModel(PreTrainedModel):
    config_class = CustomConfig
'''


@pytest.fixture
def custom_folder(tmp_path):
    """A model folder that needs its own code (``auto_map``), and the marker its code would write.

    Its tokenizer is an ordinary fast one (trained here), so only the model needs the custom code.
    """
    tf = pytest.importorskip("transformers")
    from test_transformer import _train_wordpiece

    folder = tmp_path / "custom-model"
    folder.mkdir()
    tf.BertTokenizerFast(tokenizer_object=_train_wordpiece(lowercase=True), unk_token="[UNK]", pad_token="[PAD]",
                         cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]").save_pretrained(folder)
    marker = tmp_path / "custom-code-ran"
    (folder / "custom_model.py").write_text(f"MARKER = {str(marker)!r}\n{CUSTOM_CODE}", encoding="utf-8")
    (folder / "config.json").write_text(json.dumps({
        "model_type": "isoeat-custom",
        "architectures": ["CustomModel"],
        "auto_map": {"AutoConfig": "custom_model.CustomConfig", "AutoModel": "custom_model.CustomModel"},
        "hidden_size": 8,
        "num_hidden_layers": 2,
    }), encoding="utf-8")
    return folder, marker


class _RecordingStdin(io.StringIO):
    """Answers "y" to whoever reads it, and remembers that it was read."""

    def __init__(self, reads: list[str]) -> None:
        super().__init__("y\n")
        self.reads = reads

    def read(self, *a):  # type: ignore[override]
        self.reads.append("read")
        return super().read(*a)

    def readline(self, *a):  # type: ignore[override]
        self.reads.append("readline")
        return super().readline(*a)


@pytest.fixture
def stdin_reads(monkeypatch):
    """Every read of stdin (``input()`` included) is recorded and answered "y"."""
    reads: list[str] = []

    def fake_input(prompt: str = "") -> str:
        reads.append(f"input: {prompt[:60]}")
        return "y"

    monkeypatch.setattr(builtins, "input", fake_input)
    monkeypatch.setattr(sys, "stdin", _RecordingStdin(reads))
    return reads


def _check_refusal(exc: BaseException, folder: Path) -> None:
    msg = str(exc)
    assert isinstance(exc, CustomCodeRefusedError) and isinstance(exc, IsoeatError)
    assert "\n" not in msg, msg
    assert str(folder) in msg and "custom" in msg and "never" in msg, msg


def test_hf_folder_with_custom_code_is_refused_without_asking(custom_folder, stdin_reads):
    pytest.importorskip("transformers")
    from isoeat.backends.transformer import TransformerEncoder

    folder, marker = custom_folder
    m = TransformerEncoder(str(folder), use_cache=False, progress=False, device="cpu")
    assert m.dim == 8  # from config.json: building the encoder loads nothing
    with pytest.raises(CustomCodeRefusedError) as ei:
        m.encode_sentences(["This sentence would need the custom model."])
    _check_refusal(ei.value, folder)
    assert not marker.exists(), "the model's own code was executed"
    assert stdin_reads == []


def test_st_folder_with_custom_code_is_refused_without_asking(custom_folder, stdin_reads):
    pytest.importorskip("sentence_transformers")
    folder, marker = custom_folder
    m = isoeat.load_model(f"st:{folder}", use_cache=False, progress=False, device="cpu")
    with pytest.raises(CustomCodeRefusedError) as ei:
        m.encode(["This sentence would need the custom model."])
    _check_refusal(ei.value, folder)
    assert not marker.exists(), "the model's own code was executed"
    assert stdin_reads == []


def test_refusal_in_a_process_whose_stdin_says_yes(custom_folder):
    """A real process, its stdin a pipe that answers "y": still refused, nothing runs, one line."""
    pytest.importorskip("transformers")
    folder, marker = custom_folder
    code = (
        "import sys\n"
        "from isoeat.backends.transformer import TransformerEncoder\n"
        "from isoeat.backends._hf import CustomCodeRefusedError\n"
        f"m = TransformerEncoder({str(folder)!r}, use_cache=False, progress=False, device='cpu')\n"
        "try:\n"
        "    m.encode_sentences(['A sentence.'])\n"
        "except CustomCodeRefusedError as exc:\n"
        "    print('REFUSED', exc)\n"
        "    sys.exit(3)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], input="y\ny\ny\n", capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(SRC.parent)})
    assert proc.returncode == 3, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("REFUSED")]
    assert len(lines) == 1 and str(folder) in lines[0] and "Do you wish" not in proc.stdout + proc.stderr
    assert not marker.exists(), "the model's own code was executed"


def test_loading_maps_errors_to_one_line_isoeat_errors(tmp_path):
    with pytest.raises(CustomCodeRefusedError, match="never runs custom model code"):
        with loading(tmp_path, "transformers"):
            raise ValueError("The repository x contains custom code.\nPlease pass the argument "
                             "`trust_remote_code=True` to allow custom code to be run.")
    with pytest.raises(DataFormatError, match=r"transformers cannot load this folder as a model \(bad weights\)$") as ei:
        with loading(tmp_path, "transformers"):
            raise OSError("bad weights\nmore detail")
    assert not isinstance(ei.value, CustomCodeRefusedError)


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in ("from_pretrained", "SentenceTransformer"):
                yield node


def test_every_model_load_in_src_passes_trust_remote_code_false():
    seen = 0
    for path in sorted(SRC.rglob("*.py")):
        for call in _calls(ast.parse(path.read_text(encoding="utf-8"))):
            seen += 1
            kw = {k.arg: k.value for k in call.keywords if k.arg}
            assert "trust_remote_code" in kw, f"{path}:{call.lineno}"
            value = kw["trust_remote_code"]
            assert isinstance(value, ast.Constant) and value.value is False, f"{path}:{call.lineno}"
    assert seen >= 3  # AutoTokenizer, AutoModel, SentenceTransformer


def test_custom_code_refused_error_lives_with_the_other_errors():
    import isoeat._errors as errors
    from isoeat.backends import _hf

    assert _hf.CustomCodeRefusedError is errors.CustomCodeRefusedError is isoeat.CustomCodeRefusedError
    assert "CustomCodeRefusedError" in isoeat.__all__ and "CustomCodeRefusedError" in errors.__all__
    assert issubclass(isoeat.CustomCodeRefusedError, isoeat.DataFormatError)

"""``attention-lab export-script``: one step of a panel as a Python script over core, as
File → Export experiment as Python writes it.

    attention-lab export-script --panel qkv --step 5 -o softmax.py
    attention-lab export-script --lesson my-lesson.json -o lesson.py     # its panel, step and state
    attention-lab export-script --panel patching --step 2 --model ~/models/gpt2 -o patch.py

The panel is built offscreen from empty settings, so a model panel opens its default model
unless --model (a key, a folder or a cache id) or the lesson names another.
"""

from __future__ import annotations

import sys
from pathlib import Path

from app.commands.arguments import count
from app.commands.progress import stage, working

WAIT_S = 600  # a first model load or a patching sweep on a slow machine


def add_arguments(parser) -> None:
    from app.commands.offscreen import panel_keys

    keys = ", ".join(panel_keys())
    parser.add_argument("--panel", metavar="KEY", help=f"the panel: {keys}; default: the lesson's")
    parser.add_argument(
        "--step",
        type=count("--step", 99),
        metavar="N",
        help="the step, from 1; default: the lesson's, else 1",
    )
    parser.add_argument(
        "--lesson", metavar="FILE", help="a saved lesson: the panel is put in its state first"
    )
    parser.add_argument("--model", metavar="SOURCE", help="the model to open: a key, a folder or a cache id")
    parser.add_argument("-o", "--output", metavar="FILE", help="where to write the script; default: print it")


def run(args) -> int:
    from app import lesson_files
    from app.commands.offscreen import check_panels, offscreen_app
    from app.panels import PANELS
    from app.qt_messages import keep_platform_noise_off_stderr, restore_qt_messages

    lesson = None
    if args.lesson:
        lesson, warnings = lesson_files.load(args.lesson)
        for warning in warnings:
            print(f"lesson: {warning}", file=sys.stderr)
    key = args.panel or (lesson.panel if lesson else None)
    if key is None:
        raise ValueError("Say which panel: --panel KEY, or --lesson FILE.")
    check_panels([key])
    entry = next(e for e in PANELS if e.key == key)
    stage(f"building the panel {entry.title} offscreen")
    from app import worker
    from app.commands.offscreen import TaskProgress

    keep_platform_noise_off_stderr()
    with offscreen_app() as app, TaskProgress(worker) as tasks:
        panel = entry()
        panel.resize(1400, 900)
        panel.show()
        text = script_of(panel, args, lesson, app, tasks)
        panel.close()
    restore_qt_messages()
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}: {entry.title}, step {panel.step + 1}", file=sys.stderr)
    else:
        print(text)
    return 0


def script_of(panel, args, lesson, app, tasks=None) -> str:
    """``panel`` put in the asked state (model, lesson, step), its background work done, and its
    step's script; each stage said on stderr, with the panel's tasks' progress (``tasks``)."""
    from app import lesson_files, worker

    if args.model:
        if not hasattr(panel, "use_model"):
            raise ValueError(f"{panel.title} opens no model; leave out --model.")
        stage(f"opening the model {args.model}")
        panel.use_model(args.model)
    settle(app, "the panel's first work (its default model, its first results)", tasks)
    if lesson is not None:
        stage(f"putting the panel in the lesson's state ({args.lesson})")
        for warning in lesson_files.apply(panel, lesson):  # LessonError: for another panel
            print(f"lesson: {warning}", file=sys.stderr)
        settle(app, "what the lesson's state asks for", tasks)
        lesson_files.apply(panel, lesson)  # again: choices that depend on a result (e.g. tokens)
        settle(app, "what the lesson's state asks for", tasks)
    step = args.step or (lesson.step + 1 if lesson else 1)
    if step > len(panel.steps):
        raise ValueError(f"{panel.title} has {len(panel.steps)} steps, not {step}.")
    panel.set_step(step - 1)
    settle(app, f"step {step}'s results", tasks)
    stage(f"writing the script of step {step}")
    try:
        return panel.script(step - 1)
    except ValueError as exc:
        said = panel.message.text() if panel.message.isVisible() else ""  # e.g. why no model
        raise ValueError(f"{exc} {said}".strip()) from exc
    finally:
        worker.cancel_all()


def settle(app, what: str = "the panel's work", tasks=None) -> None:
    """Wait for the panel's background work (model loads, runs); said when it lasts, with the
    tasks running and how far each has got."""
    from app import worker

    app.processEvents()
    if worker.busy():
        working(f"waiting for {what}", tasks.describe if tasks is not None else None)
    if not worker.wait_idle(WAIT_S):
        raise ValueError(f"The panel was still working after {WAIT_S} s; try again.")
    app.processEvents()

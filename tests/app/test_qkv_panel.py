import numpy as np
import pytest

from core.maths.attention import attend


def article_weights():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 8))
    W_Q, W_K, W_V = (rng.normal(size=(8, 4)) for _ in range(3))
    return attend(X @ W_Q, X @ W_K, X @ W_V), X @ W_V


def visit_all_steps(panel):
    for i in range(len(panel.steps)):
        panel.set_step(i)


def test_default_view_shows_the_articles_numbers(panel):
    trace, V = article_weights()
    visit_all_steps(panel)
    np.testing.assert_allclose(panel.weights.weight_map.values, trace.weights)
    np.testing.assert_allclose(panel.output.blend.c.values, trace.output)
    np.testing.assert_allclose(panel.output.blend.b.values, V)
    assert panel.output.blend.c.texts[1] == ["0.94", "−0.40", "−0.03", "0.59"]
    assert "[0.94, −0.40, −0.03, 0.59]" in panel.output.output_note.text()
    assert panel.weights.weight_map.image.image.shape == (4, 4)
    assert panel.weights.weight_map.levels == (0.0, 1.0)
    assert "Row sums: 1.00 1.00 1.00 1.00" in panel.weights.sum_note.text()


def test_steps_switch_views_and_diagram(panel):
    for i in range(len(panel.steps)):
        panel.set_step(i)
        assert panel.pages.currentIndex() == i
        assert panel.step_bar.currentIndex() == i
    assert panel.diagram.active == "output"
    panel.step_bar.setCurrentIndex(2)
    assert panel.step == 2 and panel.diagram.active == "matmul"


def test_every_step_view_matches_core(panel):
    panel.tokens_edit.setText("a b c a d")
    panel.d_k_spin.setValue(3)
    visit_all_steps(panel)
    Q, K, V = panel.example.projections()
    t = attend(Q, K, V)
    np.testing.assert_allclose(panel.scores.score_map.values, t.scores)
    np.testing.assert_allclose(panel.scaled.scaled_map.values, t.scaled)
    np.testing.assert_allclose(panel.weights.weight_map.values, t.weights)
    np.testing.assert_allclose(panel.projections.proj.c.values, Q)
    np.testing.assert_array_equal(panel.embeddings.x_view.values[0], panel.embeddings.x_view.values[3])
    assert panel.scores.score_map.row_labels == ["a", "b", "c", "a", "d"]


def test_clicking_a_projection_cell_highlights_its_row_and_column(panel):
    panel.set_step(1)
    panel.projections.proj.c.clicked.emit(1, 2)
    assert panel.projections.proj.a.rows == {1} and panel.projections.proj.b.cols == {2}
    text = panel.projections.proj.explanation.text()
    assert text.startswith("Q[cat, 2] = ") and "X[cat] · W_Q[:, 2]" in text
    assert text.endswith(f"= {panel.projections.proj.c.texts[1][2]}")
    panel.projections.proj_buttons.buttons()[2].click()
    assert panel.projections.proj.c.name == "V" and panel.projections.proj.a.rows == {1}


def test_hidden_steps_catch_up_when_shown(panel):
    visit_all_steps(panel)
    panel.set_step(0)
    panel.seed_spin.setValue(5)
    assert [page.stale for page in panel.step_pages] == [False, True, True, True, True, True]
    panel.set_step(4)
    Q, K, V = panel.example.projections()
    np.testing.assert_allclose(panel.weights.weight_map.values, attend(Q, K, V).weights)


def test_hover_text_explains_the_cell(panel):
    visit_all_steps(panel)
    assert panel.scaled.scaled_map.describe(1, 3).startswith("[cat → down] = ")
    assert "÷ 2.000" in panel.scaled.scaled_map.describe(1, 3)
    assert panel.weights.weight_map.describe(0, 0).startswith("[the → the] = 0.3")


def test_editing_x_changes_every_copy_and_the_result(panel):
    panel.tokens_edit.setText("the cat the")
    visit_all_steps(panel)
    before = panel.weights.weight_map.values.copy()
    panel.set_step(0)
    model = panel.embeddings.x_view.model
    assert model.setData(model.index(0, 0), "2,5")
    assert panel.embeddings.x_view.values[0, 0] == 2.5 and panel.embeddings.x_view.values[2, 0] == 2.5
    panel.set_step(4)
    assert not np.allclose(before, panel.weights.weight_map.values)


@pytest.mark.parametrize("text", ["nan", "inf", "abc", ""])
def test_bad_matrix_entries_are_refused_with_a_message(panel, text):
    before = panel.embeddings.x_view.values.copy()
    model = panel.embeddings.x_view.model
    assert not model.setData(model.index(1, 2), text)
    assert panel.message.isVisibleTo(panel) and panel.message.level == "error"
    assert "X (embeddings)[cat, 2]" in panel.message.text()
    np.testing.assert_array_equal(panel.embeddings.x_view.values, before)


@pytest.mark.parametrize(
    "action, message",
    [
        (lambda p: p.tokens_edit.setText(""), "at least one token"),
        (lambda p: p.tokens_edit.setText(" ".join(["x"] * 500)), "at most 64 tokens"),
        (lambda p: p.d_k_spin.setValue(0), "d_k must be at least 1"),
        (lambda p: p.d_model_spin.setValue(0), "d_model must be at least 1"),
    ],
)
def test_bad_settings_keep_the_previous_state(panel, action, message):
    panel.set_step(4)
    before = panel.weights.weight_map.values.copy()
    action(panel)
    assert message in panel.message.text()
    np.testing.assert_array_equal(panel.weights.weight_map.values, before)
    assert np.all(np.isfinite(panel.weights.weight_map.values))
    panel.seed_spin.setValue(3)  # the refused value is still what the controls show
    assert message in panel.message.text()
    np.testing.assert_array_equal(panel.weights.weight_map.values, before)
    panel.tokens_edit.setText("the cat sat down")  # put right: the message goes
    panel.d_k_spin.setValue(4)
    panel.d_model_spin.setValue(8)
    assert not panel.message.isVisibleTo(panel) and panel.live.state.seed == 3


def test_reset_restores_the_article_example(panel):
    panel.tokens_edit.setText("one two three")
    panel.seed_spin.setValue(9)
    panel.reset()
    panel.set_step(4)
    trace, _ = article_weights()
    np.testing.assert_allclose(panel.weights.weight_map.values, trace.weights)
    assert panel.tokens_edit.text() == "the cat sat down" and panel.seed_spin.value() == 0


def test_64_tokens_and_big_dims_stay_finite(panel):
    panel.tokens_edit.setText(" ".join(f"w{i}" for i in range(64)))
    panel.d_k_spin.setValue(256)
    visit_all_steps(panel)
    assert panel.weights.weight_map.values.shape == (64, 64)
    assert panel.weights.weight_map.cells.texts == []  # too many cells to write numbers in
    assert np.all(np.isfinite(panel.output.blend.c.values))

//! An evaluation as the client's `warden.Evaluation`, and as the daemon's
//! JSON answer, built directly as Python objects: the hot path's answer. The
//! keys and the fixed words (verdicts, modes) are interned strings, made once
//! per interpreter, so that an answer costs only its own values; the rare parts (metadata, a signed record, a
//! classifier's report) go through serde as everywhere else. The shape is the
//! `Serialize` of `Evaluation`, fields left out where it leaves them out (a
//! test compares it with the daemon's).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString};
use pyo3::{Bound, PyResult, Python, intern};

use crate::{Evaluation, Reason};

/// `verdict` as its interned word.
fn word<'py>(py: Python<'py>, text: &'static str) -> Bound<'py, PyString> {
    match text {
        "allow" => intern!(py, "allow").clone(),
        "ask" => intern!(py, "ask").clone(),
        "deny" => intern!(py, "deny").clone(),
        "interactive" => intern!(py, "interactive").clone(),
        "scheduled" => intern!(py, "scheduled").clone(),
        "webhook" => intern!(py, "webhook").clone(),
        "autonomous" => intern!(py, "autonomous").clone(),
        other => PyString::new(py, other),
    }
}

fn serde<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    Ok(pythonize::pythonize(py, value)?)
}

/// The client's classes (`warden.client`), and `object.__new__` and
/// `object.__setattr__` to fill their frozen instances.
struct Classes {
    evaluation: Py<PyAny>,
    reason: Py<PyAny>,
    new: Py<PyAny>,
    setattr: Py<PyAny>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || {
        let client = py.import("warden.client")?;
        let object = py.import("builtins")?.getattr("object")?;
        Ok(Classes {
            evaluation: client.getattr("Evaluation")?.unbind(),
            reason: client.getattr("Reason")?.unbind(),
            new: object.getattr("__new__")?.unbind(),
            setattr: object.getattr("__setattr__")?.unbind(),
        })
    })
}

/// An instance of the frozen dataclass `class` with these fields, filled as
/// its own `__init__` fills it (through `object.__setattr__`), at once.
fn instance<'py>(
    py: Python<'py>,
    classes: &Classes,
    class: &Py<PyAny>,
    fields: Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyAny>> {
    let object = classes.new.bind(py).call1((class.bind(py),))?;
    classes
        .setattr
        .bind(py)
        .call1((&object, intern!(py, "__dict__"), fields))?;
    Ok(object)
}

/// The parts of an evaluation that a harness seldom reads, `raw` (the
/// daemon's JSON) and `stages`, kept in Rust until `warden.Evaluation` is
/// first asked for them (its `__getattr__`, see `warden.client`).
#[pyclass(frozen, module = "warden._native")]
pub struct Deferred {
    evaluation: Evaluation,
}

#[pymethods]
impl Deferred {
    /// The daemon's JSON answer.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        evaluation(py, &self.evaluation)
    }

    /// The stage reports, as the daemon's JSON.
    #[getter]
    fn stages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        stages(py, &self.evaluation)
    }
}

/// The answer as `warden.Evaluation`, what `Evaluation.from_json` makes of
/// the daemon's answer, made here rather than in Python. All of it holds the
/// GIL, which threads judging at once take turns for: the less a call holds
/// it, the more they judge at once. So only what a harness reads of every
/// answer is made now; `raw` and `stages` wait in [`Deferred`] until read.
pub fn evaluation_object(py: Python<'_>, ev: Evaluation) -> PyResult<Bound<'_, PyAny>> {
    let classes = classes(py)?;
    let fields = PyDict::new(py);
    fields.set_item(intern!(py, "verdict"), word(py, ev.verdict.as_str()))?;
    fields.set_item(intern!(py, "allow"), ev.allow)?;
    let reasons = PyList::empty(py);
    for reason in &ev.reasons {
        reasons.append(instance(
            py,
            classes,
            &classes.reason,
            reason_fields(py, reason)?,
        )?)?;
    }
    fields.set_item(intern!(py, "reasons"), reasons)?;
    fields.set_item(intern!(py, "policy_id"), ev.policy_id.as_deref())?;
    fields.set_item(intern!(py, "metadata"), metadata(py, &ev)?)?;
    fields.set_item(intern!(py, "decided_by"), ev.decided_by.as_deref())?;
    fields.set_item(
        intern!(py, "interaction_mode"),
        word(py, ev.interaction_mode.as_str()),
    )?;
    fields.set_item(intern!(py, "generation"), ev.generation)?;
    fields.set_item(intern!(py, "duration_us"), ev.duration_us)?;
    fields.set_item(intern!(py, "decision_id"), py.None())?;
    match &ev.decision_record {
        Some(record) => fields.set_item(intern!(py, "decision_record"), serde(py, record)?)?,
        None => fields.set_item(intern!(py, "decision_record"), py.None())?,
    }
    fields.set_item(
        intern!(py, "_deferred"),
        Bound::new(py, Deferred { evaluation: ev })?,
    )?;
    instance(py, classes, &classes.evaluation, fields)
}

/// A reason's JSON, which is also its fields as `warden.Reason`.
fn reason_fields<'py>(py: Python<'py>, reason: &Reason) -> PyResult<Bound<'py, PyDict>> {
    let item = PyDict::new(py);
    item.set_item(intern!(py, "code"), &reason.code)?;
    item.set_item(intern!(py, "message"), &reason.message)?;
    Ok(item)
}

fn metadata<'py>(py: Python<'py>, ev: &Evaluation) -> PyResult<Bound<'py, PyAny>> {
    if ev.metadata.is_empty() {
        Ok(PyDict::new(py).into_any())
    } else {
        serde(py, &ev.metadata)
    }
}

fn stages<'py>(py: Python<'py>, ev: &Evaluation) -> PyResult<Bound<'py, PyList>> {
    let stages = PyList::empty(py);
    for stage in &ev.stages {
        let item = PyDict::new(py);
        item.set_item(intern!(py, "stage"), &stage.stage)?;
        item.set_item(intern!(py, "verdict"), word(py, stage.verdict.as_str()))?;
        item.set_item(intern!(py, "codes"), &stage.codes)?;
        item.set_item(intern!(py, "duration_us"), stage.duration_us)?;
        if let Some(digest) = &stage.digest {
            item.set_item(intern!(py, "digest"), digest)?;
        }
        if let Some(fuel) = stage.fuel_used {
            item.set_item(intern!(py, "fuel_used"), fuel)?;
        }
        if let Some(detail) = stage.error_detail.as_deref() {
            item.set_item(intern!(py, "error_detail"), detail)?;
        }
        if let Some(classifier) = &stage.classifier {
            item.set_item(intern!(py, "classifier"), serde(py, classifier)?)?;
        }
        stages.append(item)?;
    }
    Ok(stages)
}

/// The daemon's JSON answer, as a dict.
pub fn evaluation<'py>(py: Python<'py>, ev: &Evaluation) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item(intern!(py, "verdict"), word(py, ev.verdict.as_str()))?;
    out.set_item(intern!(py, "allow"), ev.allow)?;
    let reasons = PyList::empty(py);
    for reason in &ev.reasons {
        reasons.append(reason_fields(py, reason)?)?;
    }
    out.set_item(intern!(py, "reasons"), reasons)?;
    out.set_item(intern!(py, "policy_id"), ev.policy_id.as_deref())?;
    out.set_item(intern!(py, "metadata"), metadata(py, ev)?)?;
    out.set_item(intern!(py, "decided_by"), ev.decided_by.as_deref())?;
    if let Some(cause) = &ev.cause {
        out.set_item(intern!(py, "cause"), serde(py, cause)?)?;
    }
    out.set_item(
        intern!(py, "interaction_mode"),
        word(py, ev.interaction_mode.as_str()),
    )?;
    if let Some(reach) = ev.reach {
        out.set_item(intern!(py, "reach"), word(py, reach.as_str()))?;
    }
    out.set_item(intern!(py, "stages"), stages(py, ev)?)?;
    if let Some(record) = &ev.decision_record {
        out.set_item(intern!(py, "decision_record"), serde(py, record)?)?;
    }
    out.set_item(intern!(py, "generation"), ev.generation)?;
    out.set_item(intern!(py, "duration_us"), ev.duration_us)?;
    out.set_item(intern!(py, "judged_at"), &ev.judged_at)?;
    Ok(out)
}

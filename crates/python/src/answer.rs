//! An evaluation as the daemon's JSON answer, built directly as Python
//! objects: the hot path's answer. The keys and the fixed words (verdicts,
//! modes) are interned strings, made once per interpreter, so that an answer
//! costs only its own values; the rare parts (metadata, a signed record, a
//! classifier's report) go through serde as everywhere else. The shape is the
//! `Serialize` of `Evaluation`, fields left out where it leaves them out (a
//! test compares it with the daemon's).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use pyo3::{Bound, PyResult, Python, intern};

use crate::Evaluation;

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

pub fn evaluation<'py>(py: Python<'py>, ev: &Evaluation) -> PyResult<Bound<'py, PyAny>> {
    let out = PyDict::new(py);
    out.set_item(intern!(py, "verdict"), word(py, ev.verdict.as_str()))?;
    out.set_item(intern!(py, "allow"), ev.allow)?;
    let reasons = PyList::empty(py);
    for reason in &ev.reasons {
        let item = PyDict::new(py);
        item.set_item(intern!(py, "code"), &reason.code)?;
        item.set_item(intern!(py, "message"), &reason.message)?;
        reasons.append(item)?;
    }
    out.set_item(intern!(py, "reasons"), reasons)?;
    out.set_item(intern!(py, "policy_id"), ev.policy_id.as_deref())?;
    if ev.metadata.is_empty() {
        out.set_item(intern!(py, "metadata"), PyDict::new(py))?;
    } else {
        out.set_item(intern!(py, "metadata"), serde(py, &ev.metadata)?)?;
    }
    out.set_item(intern!(py, "decided_by"), ev.decided_by.as_deref())?;
    out.set_item(
        intern!(py, "interaction_mode"),
        word(py, ev.interaction_mode.as_str()),
    )?;
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
    out.set_item(intern!(py, "stages"), stages)?;
    if let Some(record) = &ev.decision_record {
        out.set_item(intern!(py, "decision_record"), serde(py, record)?)?;
    }
    out.set_item(intern!(py, "generation"), ev.generation)?;
    out.set_item(intern!(py, "duration_us"), ev.duration_us)?;
    out.set_item(intern!(py, "judged_at"), &ev.judged_at)?;
    Ok(out.into_any())
}

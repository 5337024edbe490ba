"""The Python client's models against the daemon's OpenAPI document
(``docs/openapi.json``, generated from the Rust wire types): every field the
client reads exists there with a compatible type, every field the schema
requires is read (or listed below as kept only in ``raw``), and the request
bodies the client builds are valid. No daemon, no network."""

import json
import pathlib
import typing

import pytest

from warden import answers
from warden import client as wc

ROOT = pathlib.Path(__file__).resolve().parents[3]
DOC = json.loads((ROOT / "docs" / "openapi.json").read_text())
SCHEMAS = DOC["components"]["schemas"]

#: Fields the daemon always sends that the client's dataclasses do not
#: surface: they stay reachable in ``Evaluation.raw``. Listed here so that a
#: new required field is a decision, not an oversight.
KEPT_RAW = {
    "Evaluation": {"judged_at"},
}

#: Dataclass fields the client makes up itself (they are not in the answer).
CLIENT_ONLY = {
    "Evaluation": {"decision_id", "raw"},
}


def resolve(schema):
    """Follows ``$ref`` to the named component."""
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = SCHEMAS[name]
    return schema


def json_types(schema):
    """The JSON types a schema admits (``None`` when it does not say: ``true``
    or no keyword, any JSON value)."""
    if schema is True:
        return None
    schema = resolve(schema)
    if "type" in schema:
        kinds = schema["type"]
        return set(kinds if isinstance(kinds, list) else [kinds])
    if "const" in schema:
        return {type_of(schema["const"])}
    if "enum" in schema:
        return {type_of(v) for v in schema["enum"]}
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if alternatives:
        kinds = set()
        for alternative in alternatives:
            inner = json_types(alternative)
            if inner is None:
                return None
            kinds |= inner
        return kinds
    return None


def type_of(value):
    return {
        type(None): "null",
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
    }[type(value)]


def python_types(annotation):
    """The JSON types a Python annotation holds."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union:
        kinds = set()
        for arg in typing.get_args(annotation):
            kinds |= python_types(arg)
        return kinds
    if annotation is type(None):
        return {"null"}
    if annotation is typing.Any:
        return {"null", "boolean", "integer", "number", "string", "array", "object"}
    if origin is typing.Literal:
        return {type_of(value) for value in typing.get_args(annotation)}
    base = origin or annotation
    if base in (list, typing.List, typing.Sequence):
        return {"array"}
    if base in (dict, typing.Dict, typing.Mapping):
        return {"object"}
    if base is str:
        return {"string"}
    if base is bool:
        return {"boolean"}
    if base is int:
        return {"integer"}
    if base is float:
        return {"number", "integer"}
    if isinstance(annotation, type):  # a nested model (Reason): an object
        return {"object"}
    raise AssertionError(f"no JSON type for {annotation!r}")


def validate(schema, value, at="$"):
    """A small JSON Schema check (the keywords the generated document uses)."""
    schema = resolve(schema)
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema:
            errors = []
            for alternative in schema[keyword]:
                try:
                    validate(alternative, value, at)
                    break
                except AssertionError as err:
                    errors.append(str(err))
            else:
                raise AssertionError(f"{at}: matches no alternative: {errors}")
    kinds = json_types(schema) if ("type" in schema or "enum" in schema or "const" in schema) else None
    if kinds is not None:
        kind = type_of(value)
        assert kind in kinds or (kind == "integer" and "number" in kinds), f"{at}: {kind} is not {kinds}"
    if "enum" in schema:
        assert value in schema["enum"], f"{at}: {value!r} is not one of {schema['enum']}"
    if "const" in schema:
        assert value == schema["const"], f"{at}: {value!r} is not {schema['const']!r}"
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            assert name in value, f"{at}: '{name}' is required"
        for name, item in value.items():
            if name in properties:
                validate(properties[name], item, f"{at}.{name}")
            elif schema.get("additionalProperties") is False:
                raise AssertionError(f"{at}: '{name}' is not a property")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            validate(schema["items"], item, f"{at}[{i}]")


def model_fields(model):
    return typing.get_type_hints(model, vars(wc))


@pytest.mark.parametrize("model,name", [(wc.Evaluation, "Evaluation"), (wc.Reason, "Reason")])
def test_every_field_a_model_reads_is_in_the_schema_with_a_compatible_type(model, name):
    schema = SCHEMAS[name]
    properties = schema["properties"]
    for field, annotation in model_fields(model).items():
        if field in CLIENT_ONLY.get(name, set()):
            continue
        assert field in properties, f"{name}.{field} is not in the schema"
        documented = json_types(properties[field])
        assert documented is not None, f"{name}.{field}: the schema gives no type"
        assert documented & python_types(annotation), (
            f"{name}.{field}: the client holds {annotation!r}, the schema says {documented}"
        )
        # A field the client takes as optional must not be one the schema
        # guarantees to be non-null, and the other way round.
        if "null" in documented:
            assert "null" in python_types(annotation), f"{name}.{field} may be null; the client does not expect it"


@pytest.mark.parametrize("model,name", [(wc.Evaluation, "Evaluation"), (wc.Reason, "Reason")])
def test_every_required_field_is_read(model, name):
    fields = set(model_fields(model))
    kept = KEPT_RAW.get(name, set())
    for required in SCHEMAS[name].get("required", []):
        assert required in fields or required in kept, f"{name}.{required} is required but the client drops it"
    for field in kept:
        assert field in SCHEMAS[name]["properties"], f"KEPT_RAW names {name}.{field}, which the schema lacks"


def test_the_fields_evaluation_indexes_are_required():
    # ``Evaluation.from_json`` reads these with ``data[...]``: a missing one
    # would be an error, so the daemon must always send them.
    required = set(SCHEMAS["Evaluation"]["required"])
    assert {"verdict", "reasons", "interaction_mode", "generation", "duration_us"} <= required
    assert "code" in SCHEMAS["Reason"]["required"]
    stage = SCHEMAS["StageReport"]["properties"]
    assert resolve(SCHEMAS["Evaluation"]["properties"]["stages"]["items"]) is SCHEMAS["StageReport"]
    assert {"stage", "verdict", "codes", "duration_us"} <= set(SCHEMAS["StageReport"]["required"]) <= set(stage)


def test_a_daemon_style_evaluation_validates_and_parses():
    answer = {
        "verdict": "deny",
        "allow": False,
        "reasons": [{"code": "oap.tool_not_allowed", "message": "tool 'x' not in allowlist"}],
        "policy_id": None,
        "metadata": {},
        "decided_by": "provider:allowlist",
        "interaction_mode": "interactive",
        "stages": [
            {"stage": "provider:allowlist", "verdict": "deny", "codes": ["oap.tool_not_allowed"], "duration_us": 12}
        ],
        "generation": 1,
        "duration_us": 40,
        "judged_at": "2026-01-01T00:00:00Z",
    }
    validate(SCHEMAS["Evaluation"], answer)
    evaluation = wc.Evaluation.from_json(answer, "id")
    assert evaluation.verdict == "deny" and evaluation.reasons[0].code == "oap.tool_not_allowed"


@pytest.mark.parametrize(
    "body",
    [
        wc.tool_call("bash", {"command": "ls"}),
        wc.tool_call(
            "bash",
            {"command": "ls"},
            tool_call_id="call-1",
            context={
                "thread_id": "t",
                "run_id": "r",
                "user_role": "admin",
                "interaction_mode": "scheduled",
                "cwd": None,
            },
        ),
    ],
)
def test_the_tool_calls_the_client_builds_are_valid_requests(body):
    validate(SCHEMAS["ToolCall"], body)


def test_the_other_bodies_the_client_sends_are_valid():
    validate(SCHEMAS["InteractionQuery"], {"context": {"thread_id": "t"}, "tools": ["bash"]})
    validate(SCHEMAS["RevokeRequest"], {"reviewer": "alice"})
    validate(SCHEMAS["RevokeRequest"], {})
    validate(SCHEMAS["ClearRequest"], {"reason": "wrong thread", "reviewer": "alice"})
    resume = {
        "decisions": [{"request_id": "req_1", "decision": "approve", "grant": {"minutes": 5}}],
        "reviewer": "alice",
    }
    validate(SCHEMAS["ResumeRequest"], resume)
    validate(SCHEMAS["ResumeRequest"], {"reject_all": {"message": "no"}})
    with pytest.raises(AssertionError):
        validate(SCHEMAS["ResumeRequest"], {"decisions": [], "approve_all": True})


@pytest.mark.parametrize(
    "schema,path",
    [
        # WardenClient.is_internal: interaction()["caller"]["role"]
        ("InteractionReport", ["caller", "role"]),
        # approvals(): [...]["approvals"]; grants(): [...]["grants"]
        ("ApprovalPage", ["approvals"]),
        ("GrantList", ["grants"]),
        # the error of every refusal: data["error"]["code"/"message"]
        ("Error", ["error", "code"]),
        ("Error", ["error", "message"]),
    ],
)
def test_the_keys_the_client_indexes_are_required(schema, path):
    node = SCHEMAS[schema]
    for key in path:
        node = resolve(node)
        assert key in node.get("properties", {}), f"{schema}: no '{key}'"
        assert key in node.get("required", []), f"{schema}: '{key}' is not required"
        node = node["properties"][key]


def test_the_error_details_the_client_reads_are_documented():
    detail = resolve(SCHEMAS["Error"]["properties"]["error"])
    assert "details" in detail["properties"]


# --- the typed answers (warden.answers) --------------------------------------------------

#: The TypedDicts whose schema has another name.
SCHEMA_OF = {"ReasonDict": "Reason"}
#: The TypedDicts that are one alternative of a schema's ``oneOf``, told apart
#: by the constant of their first key.
ALTERNATIVES = {
    "GrantTarget": ["CallTarget", "RuleTarget"],
    "ResolvedBy": ["ResolvedByResume", "ResolvedByClear", "ResolvedByExpiry"],
}
TYPED = sorted(name for name in answers.__all__ if typing.is_typeddict(getattr(answers, name)))
LITERALS = sorted(name for name in answers.__all__ if typing.get_origin(getattr(answers, name)) is typing.Literal)


def typed_schemas():
    """Every TypedDict of warden.answers with the schema it stands for."""
    pairs = {name: SCHEMAS[SCHEMA_OF.get(name, name)] for name in TYPED if SCHEMA_OF.get(name, name) in SCHEMAS}
    for union, names in ALTERNATIVES.items():
        for alternative in SCHEMAS[union]["oneOf"]:
            discriminant = next(k for k, v in alternative["properties"].items() if "const" in v)
            value = alternative["properties"][discriminant]["const"]
            [name] = [
                n
                for n in names
                if typing.get_args(typing.get_type_hints(getattr(answers, n))[discriminant]) == (value,)
            ]
            pairs[name] = alternative
    return pairs


def test_every_typed_answer_stands_for_a_schema():
    assert sorted(typed_schemas()) == TYPED


@pytest.mark.parametrize("name", TYPED)
def test_a_typed_answer_has_the_schemas_keys_with_compatible_types(name):
    schema = typed_schemas()[name]
    typed = getattr(answers, name)
    hints = typing.get_type_hints(typed)
    properties = schema["properties"]
    assert set(hints) == set(properties), f"{name}: keys differ from the schema's"
    assert set(typed.__required_keys__) == set(schema.get("required", [])), f"{name}: required keys differ"
    for key, annotation in hints.items():
        documented = json_types(properties[key])
        if documented is None:  # any JSON value
            continue
        held = python_types(annotation)
        assert documented & held, f"{name}.{key}: typed {annotation!r}, the schema says {documented}"
        assert ("null" in documented) == ("null" in held), f"{name}.{key}: null differs"


@pytest.mark.parametrize("name", LITERALS)
def test_a_literal_holds_the_schemas_values(name):
    schema = SCHEMAS[name]
    values = schema["enum"] if "enum" in schema else [alternative["const"] for alternative in schema["oneOf"]]
    assert set(typing.get_args(getattr(answers, name))) == set(values)


def test_the_evaluations_verdict_is_the_verdict_literal():
    assert model_fields(wc.Evaluation)["verdict"] == answers.Verdict

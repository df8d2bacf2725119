"""Bodies whose only template syntax is `{{ name }}` skip Jinja; they must render exactly as Jinja would."""

from __future__ import annotations

import pytest
from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from llm_do.compiler.templates.render import substitute_plain_variables

VARIABLES = {"company": "Acme", "seats": 45, "ratio": 0.5, "strict": False, "nothing": None, "items": [1, 2]}
JINJA = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)


@pytest.mark.parametrize("text", [
    "Work for {{ company }}.\n",
    "{{company}} has {{ seats }} seats at {{ ratio }}; strict={{ strict }}, {{ nothing }}\n\n",
    "Unicode stays: {{ company }} — café {{ seats }}",
])
def test_plain_bodies_render_as_jinja_does(text: str) -> None:
    assert substitute_plain_variables(text, VARIABLES) == JINJA.from_string(text).render(**VARIABLES)


@pytest.mark.parametrize("text", [
    "{{ items }}",  # not a scalar: Jinja decides how it prints
    "{{ company | upper }}",  # a filter
    "{% if strict %}x{% endif %} {{ company }}",  # a statement
    "{# note #} {{ company }}",  # a comment
    "{{ missing }}",  # undefined: Jinja's analysis reports it
    "{{- company }}",  # whitespace control
])
def test_anything_else_goes_to_jinja(text: str) -> None:
    assert substitute_plain_variables(text, VARIABLES) is None

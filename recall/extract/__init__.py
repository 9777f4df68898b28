"""Extraction: transcripts become typed memory (decisions, learnings, breadcrumbs), no language model.

After an import or dump stores messages, ``extract_sessions`` reads the new ones back from the store
(already scrubbed) and runs rules over them, structured signals first: the agent's own plan, the
user's answers and approvals, a command that failed and then passed; then stated rules, findings and
corrections. Every record written keeps its lineage (rule, version, confidence, source messages) and
provenance ``extracted``; only confident ones reach the briefs (adr/0018).
"""

CONFIDENT = 0.7  # extracted records at or above this (or accepted by a person) enter the briefs

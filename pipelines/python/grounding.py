"""A check over the retrieved documents: which of the answer's sentences share enough words with a document."""
import re

import evalgraph

SENTENCE = re.compile(r"(?<=[.!?])\s+")
WORD = re.compile(r"\w{3,}", re.UNICODE)


def words(text):
    return {w.lower() for w in WORD.findall(text)}


@evalgraph.node(outputs={"supported": float, "sentences": int, "unsupported": list, "cited": list})
def grounding(answer: str, retrieved_docs: list, *, min_overlap: float = 0.5):
    """The share of the answer's sentences whose words (3+ letters) are at least min_overlap covered by one
    retrieved document; the unsupported sentences; the document ids the answer names."""
    docs = [d if isinstance(d, dict) else {"id": "", "text": str(d)} for d in retrieved_docs or []]
    doc_words = [words(d.get("text", "")) for d in docs]
    sentences = [s for s in SENTENCE.split(answer.strip()) if words(s)]
    unsupported = []
    for s in sentences:
        w = words(s)
        best = max((len(w & d) / len(w) for d in doc_words), default=0.0)
        if best < min_overlap:
            unsupported.append(s)
    n = len(sentences)
    cited = [d["id"] for d in docs if d.get("id") and d["id"] in answer]
    return {"supported": round((n - len(unsupported)) / n, 4) if n else 0.0, "sentences": n,
            "unsupported": unsupported, "cited": cited}

"""An LLM judge in Python: asks the pipeline's judge provider, through the engine, whether the answer uses the
documents it was given. Needs an OpenAI-compatible server (see pipelines/python-checks.yaml)."""
import evalgraph

PROMPT = """Question: {question}

Documents:
{docs}

Answer: {answer}

Does the answer rely only on the documents? Reply with one word, yes or no, then a short reason."""


@evalgraph.node(outputs={"grounded": bool, "reply": str}, calls_llm=True)
def judge(question: str, answer: str, retrieved_docs: list, *, provider: str = "judge", max_tokens: int = 60):
    """yes/no from the judge model: does the answer rely only on the retrieved documents?"""
    docs = "\n".join(f"- [{d.get('id', '')}] {d.get('text', '')}" if isinstance(d, dict) else f"- {d}"
                     for d in retrieved_docs or [])
    reply = evalgraph.chat(provider=provider, system="You check answers against their sources.",
                           prompt=PROMPT.format(question=question, docs=docs, answer=answer),
                           temperature=0, max_tokens=max_tokens)
    return {"grounded": reply.strip().lower().startswith("yes"), "reply": reply.strip()}

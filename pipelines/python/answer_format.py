"""A format check with parameters: length in words, the required ending, phrases an answer must not contain."""
import re

import evalgraph

WORD = re.compile(r"\w+", re.UNICODE)


@evalgraph.node(outputs={"ok": bool, "words": int, "problems": list})
def answer_format(answer: str, *, max_words: int = 150, min_words: int = 3, end_with_punctuation: bool = True,
                  banned: list = ()):
    """Whether the answer's form fits: min_words..max_words words, ends with . ! ? or ) when asked,
    contains none of the banned phrases (case-insensitive). problems lists what did not fit."""
    words = len(WORD.findall(answer))
    problems = []
    if words < min_words:
        problems.append(f"{words} words, fewer than {min_words}")
    if words > max_words:
        problems.append(f"{words} words, more than {max_words}")
    if end_with_punctuation and not answer.rstrip().endswith((".", "!", "?", ")")):
        problems.append("does not end with punctuation")
    low = answer.lower()
    problems += [f"contains '{b}'" for b in banned if b.lower() in low]
    return {"ok": not problems, "words": words, "problems": problems}

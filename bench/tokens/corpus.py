#!/usr/bin/env python3
"""The token bench's corpus: one JSON string per line, from the repository's own texts (Markdown paragraphs,
the shipped data sets' text fields) and short texts in German, French, Russian, Chinese and Japanese, so that
the approximation's error is measured on what evalgraph sends (prompts built from such data) and not on one
language only. Usage: corpus.py REPO_ROOT > corpus.jsonl"""
import csv, json, pathlib, sys

root = pathlib.Path(sys.argv[1])
out = []
for md in sorted(root.glob('**/*.md')):
    if 'build' in md.parts or 'node_modules' in md.parts:
        continue
    for para in md.read_text(encoding='utf-8', errors='replace').split('\n\n'):
        if len(para.strip()) > 20:
            out.append(para.strip()[:4000])
def strings(v):
    if isinstance(v, str):
        if len(v) > 10:
            yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
for jl in sorted((root / 'pipelines').glob('**/*.jsonl')):
    for line in jl.read_text(encoding='utf-8', errors='replace').splitlines()[:300]:
        try:
            out.extend(list(strings(json.loads(line)))[:20])
        except json.JSONDecodeError:
            pass
for c in sorted((root / 'pipelines').glob('**/*.csv')):
    with open(c, encoding='utf-8', errors='replace') as f:
        for row in list(csv.reader(f))[:300]:
            out.extend(x for x in row if len(x) > 10)
more = [
    "Die Antwort des Assistenten war hilfreich, aber sie enthielt zwei sachliche Fehler über die Öffnungszeiten.",
    "Bitte bewerte die folgende Unterhaltung auf einer Skala von 1 bis 5 und begründe deine Entscheidung kurz.",
    "Le modèle a répondu correctement à la question, mais la réponse était trop longue et peu structurée.",
    "Évaluez la pertinence de la réponse par rapport à la question posée par l'utilisateur.",
    "Ответ ассистента был полезным, но содержал две фактические ошибки о часах работы.",
    "Пожалуйста, оцените следующий диалог по шкале от 1 до 5 и кратко обоснуйте своё решение.",
    "助手的回答很有帮助，但关于营业时间有两个事实错误。请用一到五分评价以下对话。",
    "アシスタントの回答は役に立ちましたが、営業時間について二つの誤りがありました。",
    "Name: Jürgen Müller; Straße: Hauptstraße 12; PLZ 80331 München — Tel. +49 89 1234567",
    "{\"score\": 4, \"reason\": \"mostly correct\", \"flags\": [\"verbose\", \"off-topic\"]}",
]
out.extend(more * 3)
for s in out:
    print(json.dumps(s, ensure_ascii=False))

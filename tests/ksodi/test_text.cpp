#include <catch2/catch.hpp>

#include "ksodi/detect.hpp"
#include "ksodi/text.hpp"

using namespace ksodi;
using V = std::vector<std::string_view>;

TEST_CASE("lowercasing and tokens handle umlauts, ß and capital ẞ", "[text]") {
  CHECK(text::to_lower("ÄÖÜ STRAẞE Élan Łódź") == "äöü straße élan łódź");
  auto t = text::tokenize("Äpfel, Öl und STRAẞE über Übermaß (z.B. 3.5 kg)!");
  std::vector<std::string> want{"äpfel", "öl", "und", "straße", "über", "übermaß", "z", "b", "3", "5", "kg"};
  CHECK(t == want);
  // „German quotes“ and dashes are not part of tokens.
  CHECK(text::tokenize("„Hallo“ – Welt…") == std::vector<std::string>{"hallo", "welt"});
}

TEST_CASE("sentence splitter: German abbreviations, ordinals and decimals", "[text]") {
  CHECK(text::split_sentences("Das gilt z. B. für Verträge. Danach kommt mehr.") ==
        V{"Das gilt z. B. für Verträge.", "Danach kommt mehr."});
  CHECK(text::split_sentences("Dr. Müller kommt am 3. Mai. Er bringt 3.5 kg mit.") ==
        V{"Dr. Müller kommt am 3. Mai.", "Er bringt 3.5 kg mit."});
  CHECK(text::split_sentences("Im 1. Schritt öffnen Sie die App. Siehe Kap. 3 und Abs. 2 bzw. Nr. 5. Fertig.") ==
        V{"Im 1. Schritt öffnen Sie die App.", "Siehe Kap. 3 und Abs. 2 bzw. Nr. 5.", "Fertig."});
  CHECK(text::split_sentences("Es kostet ca. 20 Euro, d. h. weniger als u. a. Prof. Weber sagt. Gut.").size() == 2);
}

TEST_CASE("sentence splitter: English abbreviations, URLs, ellipses, quotes", "[text]") {
  CHECK(text::split_sentences("Use e.g. the CLI. It works, i.e. mostly. See https://example.com/a.b for more.") ==
        V{"Use e.g. the CLI.", "It works, i.e. mostly.", "See https://example.com/a.b for more."});
  CHECK(text::split_sentences("Mr. Smith vs. Fig. 2 etc. are fine. Next one!") ==
        V{"Mr. Smith vs. Fig. 2 etc. are fine.", "Next one!"});
  CHECK(text::split_sentences("Warte… Dann geht es weiter.") == V{"Warte…", "Dann geht es weiter."});
  CHECK(text::split_sentences("Er sagte: „Das ist gut.“ Dann ging er. Wirklich?") ==
        V{"Er sagte: „Das ist gut.“", "Dann ging er.", "Wirklich?"});
  CHECK(text::split_sentences("It is version 2. Then we stop.") == V{"It is version 2.", "Then we stop."});
}

TEST_CASE("sentence splitter: list items, tables and code fences", "[text]") {
  CHECK(text::split_sentences("Intro text.\n- Punkt eins\n- Punkt zwei. Mit zwei Sätzen.\n1. Nummer eins") ==
        V{"Intro text.", "Punkt eins", "Punkt zwei.", "Mit zwei Sätzen.", "Nummer eins"});
  // Header row and separator are not units; every data row is one unit.
  CHECK(text::split_sentences("| A | B |\n|---|---|\n| x. Y | y |\n| z | w |") == V{"x. Y | y", "z | w"});
  // Fenced code is excluded and never split; headings are excluded.
  CHECK(text::split_sentences("## Titel\nText davor.\n\n```python\nx = 1. Y = 2\n\ny = 2\n```\n\nText danach.") ==
        V{"Text davor.", "Text danach."});
}

TEST_CASE("paragraph splitter: blank lines, code fences and tables", "[text]") {
  auto p = text::split_paragraphs("Erster Absatz\nzweite Zeile.\n\n```\na\n\nb\n```\nNach dem Code.\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- x\n- y\n\n---\n");
  REQUIRE(p.size() == 5);
  CHECK(p[0].text == "Erster Absatz\nzweite Zeile.");
  CHECK(p[1].kind == text::BlockKind::Code);
  CHECK(p[1].text == "```\na\n\nb\n```");
  CHECK(p[2].text == "Nach dem Code.");
  CHECK(p[3].kind == text::BlockKind::Table);
  CHECK(p[4].text == "- x\n- y");
  CHECK(text::split_paragraphs("").empty());
  CHECK(text::split_paragraphs("\n\n  \n").empty());
}

TEST_CASE("markdown line classes", "[text]") {
  auto L = text::classify_lines("# H\n- b\n* c\n• d\n1. n\n2) m\nSchritt 3: s\n**Fett**\nFazit:\n---\n|a|b|\n|-|-|\ntext");
  using K = text::LineKind;
  std::vector<K> want{K::Heading, K::Bullet, K::Bullet, K::Bullet, K::Numbered, K::Numbered, K::Numbered,
                      K::Heading, K::Heading, K::Rule,  K::TableRow, K::TableSep, K::Text};
  REQUIRE(L.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(static_cast<int>(L[i].kind) == static_cast<int>(want[i]));
  CHECK(L[6].number == 3);
  CHECK(L[6].content == "s");
}

TEST_CASE("keyword sets: phrases, prefixes, raw patterns, negation", "[detect]") {
  detect::KeywordSet k{"erkläre*", "step by step", "format:", "```"};
  text::TokenizedText t;
  t.assign("Bitte ERKLÄREN Sie das.");
  CHECK(std::string(k.find(t)) == "erkläre*");
  t.assign("Go step-by-step. Format: JSON");
  CHECK(k.count(t) == 2);
  t.assign("Reformat: no");  // raw pattern needs a word boundary
  CHECK(k.find(t) == nullptr);
  detect::KeywordSet tab{"tabelle", "table"};
  t.assign("Bitte keine Tabelle verwenden.");
  CHECK(tab.find(t, true) == nullptr);
  CHECK(tab.find(t, false) != nullptr);
  t.assign("Don't use a table");
  CHECK(tab.find(t, true) == nullptr);
  t.assign("Kein Fließtext, sondern eine Tabelle.");  // the comma ends the negated clause
  CHECK(tab.find(t, true) != nullptr);
}

TEST_CASE("reference scanners", "[detect]") {
  CHECK(detect::count_quotations("Dort steht „die Frist beträgt drei Monate“ und \"x\".") == 1);
  CHECK(detect::count_bracket_refs("Siehe [1] und [Doc 2], aber nicht [Link](http://x) oder [abc].") == 2);
  CHECK(detect::count_paren_refs("Das steht dort (Kap. 2) und (S. 14), nicht (hier).") == 2);
}

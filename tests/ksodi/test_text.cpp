#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

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

TEST_CASE("hash_bytes: equal bytes hash equal, and every byte of a short string counts", "[text]") {
  const std::string a = "abcdefghijklmnopqrstuvwxyz";
  for (std::size_t n = 0; n <= 20; ++n) {
    const std::string s = a.substr(0, n), copy = s;  // other memory, same bytes
    CHECK(text::hash_bytes(s) == text::hash_bytes(copy));
    for (std::size_t i = 0; i < n; ++i) {
      std::string t = s;
      t[i] = 'X';
      CHECK(text::hash_bytes(t) != text::hash_bytes(s));  // the tail reads of 1..7 bytes miss none
    }
  }
  CHECK(text::hash_bytes("ab") != text::hash_bytes(std::string_view("ab\0", 3)));  // the length counts
}

namespace {
// A ProbeTable entry as the KSODI operators use one: the key lives elsewhere (keys[index]).
struct IndexSlot {
  std::uint64_t hash = 0;
  std::uint32_t index = 0xFFFFFFFFu;
  bool empty() const { return index == 0xFFFFFFFFu; }
};
}  // namespace

TEST_CASE("ProbeTable: insert and find across several rehashes, keys whose hashes collide", "[text]") {
  std::vector<std::string> keys;
  text::ProbeTable<IndexSlot> table(16);
  // Every fourth key shares one hash (a full collision), the others are hashed normally: the table grows from
  // 16 slots past 8192 (ten rehashes) and keeps every key findable.
  auto hash_of = [](const std::string &k, std::size_t i) { return i % 4 == 0 ? std::uint64_t{42} : text::hash_bytes(k); };
  auto find = [&](const std::string &k, std::uint64_t h) -> const IndexSlot * {
    return table.find(h, [&](const IndexSlot &s) { return keys[s.index] == k; });
  };
  constexpr std::size_t kKeys = 5000;
  for (std::size_t i = 0; i < kKeys; ++i) {
    const std::string k = "tok" + std::to_string(i);
    const std::uint64_t h = hash_of(k, i);
    REQUIRE(find(k, h) == nullptr);
    table.insert({h, static_cast<std::uint32_t>(keys.size())});
    keys.push_back(k);
  }
  CHECK(table.size() == kKeys);
  std::size_t found = 0;
  for (std::size_t i = 0; i < kKeys; ++i) {
    const std::string k = "tok" + std::to_string(i);
    const IndexSlot *s = find(k, hash_of(k, i));
    if (s != nullptr && s->index == i) ++found;
  }
  CHECK(found == kKeys);
  // Absent keys, with a colliding hash or their own, are not found.
  CHECK(find("tok5000", 42) == nullptr);
  CHECK(find("tok5000", text::hash_bytes("tok5000")) == nullptr);
  CHECK(find("tok1", 42) == nullptr);  // present, but under another hash
  // Hashes that differ only above the table's mask land in one probe chain and stay apart.
  text::ProbeTable<IndexSlot> chain(16);
  for (std::uint32_t i = 0; i < 6; ++i) chain.insert({(std::uint64_t{i} << 40) | 3, i});
  for (std::uint32_t i = 0; i < 6; ++i) {
    const IndexSlot *s = chain.find((std::uint64_t{i} << 40) | 3, [](const IndexSlot &) { return true; });
    REQUIRE(s != nullptr);
    CHECK(s->index == i);
  }
  // reset empties it.
  table.reset(16);
  CHECK(table.size() == 0);
  CHECK(find("tok1", text::hash_bytes("tok1")) == nullptr);
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

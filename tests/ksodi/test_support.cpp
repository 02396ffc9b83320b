// The lexical support measure (ksodi/support.hpp) and O0 on it (alignment: support, the default).
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "ksodi/support.hpp"
#include "ksodi/text.hpp"
#include "ksodi_measures/o0.hpp"
#include "ksodi_measures/o0_calibration.hpp"

using namespace ksodi::support;

namespace {
double sup(std::string_view sentence, std::string_view doc, Lang lang) {
  return support_in(sentence_terms(sentence, lang), DocIndex(doc, lang));
}
std::vector<std::string> missing(std::string_view sentence, std::string_view doc, Lang lang) {
  std::vector<DocIndex> d;
  d.emplace_back(doc, lang);
  return best_support(sentence_terms(sentence, lang), d).missing;
}
}  // namespace

TEST_CASE("support: language from stop words", "[support]") {
  CHECK(detect_language("Die Frist beträgt einen Monat und ist nicht verlängerbar.") == Lang::De);
  CHECK(detect_language("The notice period is one month and it cannot be extended.") == Lang::En);
  CHECK(detect_language("") == Lang::En);
}

TEST_CASE("support: stop words are not content, each term counts once", "[support]") {
  auto t = sentence_terms("Die Kündigung ist in Textform möglich, und die Kündigung ist kostenlos.", Lang::De);
  std::vector<std::string> shown;
  for (const auto &x : t) shown.push_back(x.shown);
  CHECK(shown == std::vector<std::string>{"Kündigung", "Textform", "möglich", "kostenlos"});
  CHECK(sentence_terms("Yes, I think so.", Lang::En).size() == 2);  // the speaker and "think"
  CHECK(sentence_terms("Ja, das ist so.", Lang::De).empty());
}

TEST_CASE("support: a sentence about the speaker needs a document that speaks in the first person", "[support]") {
  // Pronouns are stop words; the speaker term keeps "I have an iguana" from resting on "iguana" alone.
  const std::string lizards = "The green iguana is a large lizard kept as a pet.";
  CHECK(sup("I have an iguana.", lizards, Lang::En) == 0.5);
  CHECK(missing("I have an iguana.", lizards, Lang::En) == std::vector<std::string>{"I (speaker)"});
  CHECK(sup("My iguana is green.", lizards, Lang::En) == Approx(2.0 / 3));
  CHECK(sup("The iguana is green.", lizards, Lang::En) == 1.0);  // no speaker, nothing changes
  // A document in the first person (a quote, the user's own words) holds the speaker.
  CHECK(sup("I was born in Hawaii.", "\"I was born in Hawaii,\" Obama said.", Lang::En) == 1.0);
  // A long first-person sentence still rests on its content.
  CHECK(sup("I recommend restarting the router first.", "Restart the router first, then recommend it.", Lang::En) ==
        Approx(0.8));
  // German: ich, mich, mir, mein…
  CHECK(sup("Ich habe einen Leguan.", "Der grüne Leguan ist eine große Echse.", Lang::De) == 0.5);
  CHECK(sup("Mir gefällt der Leguan.", "Der Leguan gefällt vielen Menschen.", Lang::De) == Approx(2.0 / 3));
  // "I" after a capitalised word inside a sentence is a numeral; after a comma or at the start, the speaker.
  CHECK(sup("It began after World War I ended.", "World War I ended in 1918, then it began.", Lang::En) == 1.0);
  CHECK(sup("Thanks John, I agree.", "John agrees.", Lang::En) == 0.75);  // John (a name, weight 2) and "agree" found, the speaker not
  // Courtesy stays courtesy; a sentence whose only term is the speaker is a claim about the speaker.
  CHECK(courtesy_only(sentence_terms("Let me know if you need anything else.", Lang::En)));
  auto yes = sentence_terms("Yes, I do.", Lang::En);
  REQUIRE(yes.size() == 1);
  CHECK(yes[0].kind == TermKind::Speaker);
  CHECK_FALSE(courtesy_only(yes));
  // A missing speaker is not a swapped name or number: it lowers the support, it does not void the sentence.
  std::vector<DocIndex> d;
  d.emplace_back(lizards, Lang::En);
  CHECK(best_support(sentence_terms("I have an iguana.", Lang::En), d).exact_missing.empty());
}

TEST_CASE("support: Snowball stemming finds inflected forms, DE and EN", "[support]") {
  CHECK(sup("Verträge werden monatlich gekündigt.", "Ein Vertrag kann monatlich gekündigt werden.", Lang::De) == 1.0);
  CHECK(sup("The contracts were cancelled monthly.", "A contract can be cancelled monthly.", Lang::En) == 1.0);
  CHECK(sup("Employees requested approvals.", "Each employee requests approval from a manager.", Lang::En) == 1.0);
  // no stemming across unrelated words
  CHECK(sup("Pinguine leben in der Antarktis.", "Ein Vertrag kann monatlich gekündigt werden.", Lang::De) == 0.0);
}

TEST_CASE("support: German compounds found through their parts, and parts in compounds", "[support]") {
  const std::string doc = "Die Frist für eine Kündigung beträgt einen Monat. Das Formular steht im Portal.";
  CHECK(sup("Die Kündigungsfrist beträgt einen Monat.", doc, Lang::De) == 1.0);   // Kündigung + s + Frist
  CHECK(sup("Das Kündigungsformular steht im Portal.", doc, Lang::De) == 1.0);    // Kündigung + s + Formular
  CHECK(sup("Die Frist beträgt einen Monat.", "Die Kündigungsfrist beträgt einen Monat.", Lang::De) == 1.0);  // head
  // a compound whose parts are not both in the document is not found
  CHECK(missing("Die Widerrufsfrist beträgt einen Monat.", doc, Lang::De) == std::vector<std::string>{"Widerrufsfrist"});
}

TEST_CASE("support: numbers must match exactly, number words are numbers", "[support]") {
  const std::string doc = "Die Kündigungsfrist beträgt drei Monate. Der Tarif kostet 9,99 Euro im Monat.";
  CHECK(sup("Die Frist beträgt 3 Monate.", doc, Lang::De) == 1.0);
  CHECK(sup("Der Tarif kostet 9.99 Euro.", doc, Lang::De) == 1.0);
  std::vector<DocIndex> d;
  d.emplace_back(doc, Lang::De);
  auto s = best_support(sentence_terms("Die Frist beträgt vier Monate.", Lang::De), d);
  CHECK(s.exact_missing == std::vector<std::string>{"vier"});
  auto p = best_support(sentence_terms("Der Tarif kostet 19,99 Euro im Monat.", Lang::De), d);
  CHECK(p.exact_missing == std::vector<std::string>{"19,99"});
  CHECK(p.support > 0.5);  // the other words match: a share alone would not catch it
  CHECK(sentence_terms("am 01.03.2023 um 10:30", Lang::De)[0].key() == "01.03.2023");
  // units as symbols or words
  CHECK(sup("Der Tarif kostet 9,99 Euro im Monat.", "Tarif S kostet 9,99 € pro Monat.", Lang::De) == 1.0);
  CHECK(sup("The plan costs 9.99 EUR.", "Plan S costs 9,99 € a month.", Lang::En) == 1.0);
  // Rabatt, 20 (a number: 2) and Prozent found, "beträgt" missing: 4 of 5
  CHECK(sup("Der Rabatt beträgt 20 Prozent.", "Rabatt: 20 % auf alle Tarife.", Lang::De) == Approx(4.0 / 5.0));
  // data sizes: "MB" = "Megabyte" ("pro" is a function word); "GB" against "TB" stays a different unit
  CHECK(sup("Ohne Paket kostet 0,49 € pro MB.", "Ohne Paket kostet jedes Megabyte 0,49 Euro.", Lang::De) == 1.0);
  CHECK(sup("The plan includes 1 GB.", "The plan includes 1 TB of data.", Lang::En) < 1.0);
  // "4th" = "fourth" (a number, weight 2) and "day" found, "starts" missing: 3 of 4
  CHECK(sup("It starts on the 4th day.", "From the fourth day on.", Lang::En) == Approx(3.0 / 4.0));
}

TEST_CASE("support: names must match exactly", "[support]") {
  const std::string doc = "Remote work is possible within the EU, for example in Portugal, with approval by HR.";
  std::vector<DocIndex> d;
  d.emplace_back(doc, Lang::En);
  auto ok = best_support(sentence_terms("Remote work in Portugal needs approval by HR.", Lang::En), d);
  CHECK(ok.exact_missing.empty());
  auto swapped = best_support(sentence_terms("Remote work in Norway needs approval by HR.", Lang::En), d);
  CHECK(swapped.exact_missing == std::vector<std::string>{"Norway"});
  // German: capitals mark nouns, so only acronyms, inner capitals and letter-digit mixes are names
  auto de = sentence_terms("Der NordFlex Tarif gilt für das Modell T3 und die EU.", Lang::De);
  int names = 0;
  for (const auto &t : de) names += t.kind == TermKind::Name ? 1 : 0;
  CHECK(names == 3);  // NordFlex, T3, EU — not "Tarif", "Modell"
  // a shouted sentence does not make every word a name
  for (const auto &t : sentence_terms("WE ARE TALKING ABOUT THE MOVIE", Lang::En)) CHECK(t.kind == TermKind::Word);
}

TEST_CASE("support: a document's id is part of what it states, generated ids are not", "[support]") {
  std::vector<DocIndex> d;
  d.emplace_back("3.11.8 (main, Feb 12 2024) [GCC 12.2.0]", Lang::En, "run_python#2");
  CHECK(best_support(sentence_terms("The sandbox runs Python 3.11.8.", Lang::En), d).exact_missing.empty());
  std::vector<DocIndex> g;
  g.emplace_back("Die Frist beträgt einen Monat.", Lang::De, "doc_3");
  CHECK(best_support(sentence_terms("Die Frist beträgt 3 Monate.", Lang::De), g).exact_missing ==
        std::vector<std::string>{"3"});  // "doc_3" is made up by the reader: its 3 is no evidence
}

TEST_CASE("support: source references are not claims", "[support]") {
  CHECK(sup("Up to 5 days carry over [HB 4.2].", "Up to 5 days carry over to the next year.", Lang::En) == 1.0);
  // "Laut" is an attribution word, "(Kap. 7.2)" a reference: Handbuch (1) missing, blinkt (1) and LED (a name, 2) found
  CHECK(sup("Laut Handbuch (Kap. 7.2) blinkt die LED.", "Die LED blinkt blau.", Lang::De) == Approx(3.0 / 4.0));
  // a parenthesis with content stays content
  CHECK(missing("Zwei Batterien (1,5 V) halten lange.", "Zwei Batterien halten lange.", Lang::De) ==
        std::vector<std::string>{"1,5"});
}

TEST_CASE("O0 support: an unsupported sentence between supported ones, with evidence", "[support][o0]") {
  ksodi::O0Input in;
  in.answer =
      "Die Kündigungsfrist beträgt einen Monat zum Monatsende. Pinguine leben übrigens gern in der Antarktis. "
      "Die Kündigung ist per E-Mail möglich.";
  in.docs = {{"tarif", "Kündigung: Verträge können mit einer Frist von einem Monat zum Monatsende gekündigt werden."},
             {"form", "Die Kündigung ist in Textform (E-Mail, Kundenportal oder Brief) möglich."}};
  auto r = ksodi::compute_o0(in, {}, tfidf_fn());
  REQUIRE(r.computed);
  CHECK(r.embedding_model_id.empty());  // no embedding call
  CHECK(r.language == "de");
  REQUIRE(r.sentences.size() == 3);
  CHECK(r.sentences[0].best_doc == 0);
  CHECK_FALSE(r.sentences[0].unsupported);
  CHECK(r.sentences[1].unsupported);
  CHECK(r.sentences[1].align == 0.0);
  CHECK(r.sentences[1].missing.size() == 4);  // Pinguine, leben, übrigens, Antarktis
  CHECK(r.sentences[2].best_doc == 1);        // each sentence by its own best document
  CHECK_FALSE(r.sentences[2].unsupported);
  CHECK(r.U == Approx(1.0 / 3.0));
  // Each sentence by its own best document: 3 of 4 terms ("beträgt" is not in "tarif"), 0 of 4, 3 of 4 ("per"
  // is not in "form") → A_ret = 6/12, although the answer combines two documents.
  CHECK(r.A_ret == Approx(0.5));
  CHECK(r.O0 == Approx(std::clamp(0.6 * r.A_ret + 0.2 * r.T - 0.2 * r.U, 0.0, 1.0)).margin(1e-12));
}

TEST_CASE("O0 support: a swapped number makes a sentence unsupported, an attribution marker excuses it", "[support][o0]") {
  ksodi::O0Input in;
  in.docs = {{"d", "Die Kündigungsfrist beträgt drei Monate zum Monatsende."}};
  ksodi::O0Params p;
  p.alpha = 1.0;
  in.answer = "Die Kündigungsfrist beträgt vier Monate zum Monatsende.";
  auto r = ksodi::compute_o0(in, p, tfidf_fn());
  CHECK(r.sentences[0].align > p.tau);  // most words match …
  CHECK(r.sentences[0].unsupported);    // … but the number does not
  CHECK(r.sentences[0].exact_missing == std::vector<std::string>{"vier"});
  in.answer = "Laut Dokument beträgt die Kündigungsfrist vier Monate zum Monatsende.";
  CHECK_FALSE(ksodi::compute_o0(in, p, tfidf_fn()).sentences[0].unsupported);  // the seed's rule: marker → not U
}

TEST_CASE("O0 support: sentences of courtesy claim nothing", "[support][o0]") {
  CHECK(courtesy_only(sentence_terms("Let me know if you need anything else.", Lang::En)));
  CHECK(courtesy_only(sentence_terms("Sure! Here you go:", Lang::En)));
  CHECK(courtesy_only(sentence_terms("Ich hoffe, das hilft! Melden Sie sich gern bei weiteren Fragen.", Lang::De)));
  CHECK_FALSE(courtesy_only(sentence_terms("The help desk is open until 5 pm.", Lang::En)));
  CHECK_FALSE(courtesy_only(sentence_terms("Sure, the Kündigung is free.", Lang::En)));
  const ksodi::O0Input in =
      o0_unit("Die Frist beträgt drei Monate. Ich hoffe, das hilft!", {{"d", "Die Frist beträgt drei Monate."}});
  auto r = ksodi::compute_o0(in, {}, tfidf_fn());
  REQUIRE(r.sentences.size() == 2);
  CHECK_FALSE(r.sentences[1].has_terms);
  CHECK_FALSE(r.sentences[1].unsupported);
  CHECK(r.U == 0.0);
  CHECK(r.A_ret == 1.0);
}

TEST_CASE("O0 support: nothing claimed → neutral A_ret and a flag, no docs → not computed", "[support][o0]") {
  ksodi::O0Input in = o0_unit("Ja, gerne!", {{"d", "Die Frist beträgt drei Monate."}});
  auto r = ksodi::compute_o0(in, {}, tfidf_fn());
  CHECK(r.no_content_terms);
  CHECK(r.A_ret == 0.5);
  CHECK(r.U == 0.0);
  CHECK_FALSE(r.sentences[0].has_terms);
  in.docs.clear();
  CHECK_FALSE(ksodi::compute_o0(in, {}, tfidf_fn()).computed);
}

// The shipped sample (pipelines/data/ksodi_standard_sample.jsonl) says per unit whether its answer was written to
// be grounded or drifting (field "grounding", labelled by reading the texts, see its "grounding_note"). With the
// calibrated defaults every drifting answer must score O0 <= 0.25 and every grounded one O0 >= 0.5.
TEST_CASE("O0 support: the sample's grounded answers score >= 0.5, its drifting ones <= 0.25", "[support][o0][sample]") {
  const std::set<std::string> known_misses = {};
  ksodi::O0Params p;
  p.alpha = ksodi::kSupportCalibration.alpha;
  p.beta = ksodi::kSupportCalibration.beta;
  p.gamma = ksodi::kSupportCalibration.gamma;
  p.tau = ksodi::kSupportCalibration.tau;
  std::ifstream f(EVALGRAPH_SOURCE_DIR "/pipelines/data/ksodi_standard_sample.jsonl");
  REQUIRE(f.good());
  std::string line;
  int grounded = 0, drifting = 0;
  std::set<std::string> misses;
  while (std::getline(f, line)) {
    auto j = nlohmann::json::parse(line);
    const std::string id = j["id"], g = j["grounding"];
    if (g != "grounded" && g != "drifting") continue;
    ksodi::O0Input in;
    in.answer = j["assistant_text"];
    in.user_text = j.value("user_text", "");
    const evalgraph::Record rec(line, "test", {"retrieved_docs", "tool_outputs"});
    in.docs = rec.docs(0, "doc_");
    in.tool_outputs = rec.docs(1, "tool_");
    auto r = ksodi::compute_o0(in, p, tfidf_fn());
    REQUIRE(r.computed);
    INFO(id << " (" << g << "): O0 = " << r.O0);
    if (g == "drifting") {
      ++drifting;
      CHECK(r.O0 <= 0.25);
    } else {
      ++grounded;
      if (r.O0 < 0.5) misses.insert(id);
    }
  }
  CHECK(drifting == 10);
  CHECK(grounded == 34);
  CHECK(misses == known_misses);
}

TEST_CASE("O0 support: the user's own words are given, not claims — except where the assistant speaks of itself", "[support][o0]") {
  ksodi::O0Input in;
  in.user_text = "How do I sum revenue per country in my DataFrame?";
  in.docs = {{"ref", "DataFrame.groupby(by) groups rows by the values of a column. Call .sum() on the result."}};
  in.answer = "Group the rows by country and sum the revenue column.";
  auto r = ksodi::compute_o0(in, {}, tfidf_fn());
  REQUIRE(r.sentences.size() == 1);
  CHECK(r.sentences[0].align == 1.0);  // group, rows, sum, column found; country, revenue given
  CHECK(r.sentences[0].given == std::vector<std::string>{"country", "revenue"});
  CHECK(r.sentences[0].missing.empty());
  // A word both the user and a document hold is simply found.
  in.answer = "Sum the column per group.";
  r = ksodi::compute_o0(in, {}, tfidf_fn());
  CHECK(r.sentences[0].given.empty());
  // Off: scored against the docs like any other word.
  ksodi::O0Params off;
  off.user_words_given = false;
  in.answer = "Group the rows by country and sum the revenue column.";
  r = ksodi::compute_o0(in, off, tfidf_fn());
  CHECK(r.sentences[0].missing == std::vector<std::string>{"country", "revenue"});
  // A first-person sentence takes the user's words up as claims about the speaker.
  in.user_text = "I love cookies, they are my favourite food. Do you bake?";
  in.docs = {{"k", "Cookies are baked from flour, sugar and fat."}};
  in.answer = "I love cookies too, they are my favourite.";
  r = ksodi::compute_o0(in, {}, tfidf_fn());
  CHECK(r.sentences[0].given.empty());
  CHECK(r.sentences[0].unsupported);
  // German: the user's things are given; names and numbers the user gave stay claims a document must state.
  in.user_text = "Wie lange dauert die Lieferung meiner Gartenmöbel? Ich habe Bestellung 4711 im NordShop aufgegeben.";
  in.docs = {{"kb", "Die Lieferung dauert drei bis fünf Werktage."}};
  in.answer = "Die Lieferung Ihrer Gartenmöbel dauert drei bis fünf Werktage.";
  r = ksodi::compute_o0(in, {}, tfidf_fn());
  REQUIRE(r.sentences.size() == 1);
  CHECK(r.sentences[0].given == std::vector<std::string>{"Gartenmöbel"});
  CHECK(r.sentences[0].align == 1.0);
  in.answer = "Die Bestellung 4711 aus dem NordShop kommt in drei bis fünf Werktagen.";
  r = ksodi::compute_o0(in, {}, tfidf_fn());
  CHECK(r.sentences[0].exact_missing == std::vector<std::string>{"4711", "NordShop"});
  CHECK(r.sentences[0].unsupported);
}

TEST_CASE("O0 support: a JSON answer is scored on its string values, code values left out", "[support][o0]") {
  ksodi::O0Input in;
  in.docs = {{"ref", "JSON Lines files hold one JSON object per line. Read them with json.loads for each line, skipping empty lines."}};
  in.answer = "Sure, here is the JSON you asked for.\n\n{\"language\": \"python\", \"code\": \"import json\\nrows = [json.loads(l) for l in open('a.jsonl') if l.strip()]\", "
              "\"explanation\": \"Each line is read with json.loads. Empty lines are skipped.\"}\n\nAnything else?";
  auto r = ksodi::compute_o0(in, {}, tfidf_fn());
  std::vector<std::string> units;
  for (const auto &s : r.sentences) units.push_back(in.answer.substr(s.start, s.length));
  CHECK(units == std::vector<std::string>{"Sure, here is the JSON you asked for.", "python", "Each line is read with json.loads.", "Empty lines are skipped.", "Anything else?"});
  CHECK(r.n_attrib == 0);  // the JSON's quotes are not quotations
  // Keys are structure: "language", "code", "explanation" are nowhere among the terms.
  for (const auto &s : r.sentences)
    for (const auto &t : s.missing) CHECK((t != "language" && t != "code" && t != "explanation"));
  // Unclosed JSON ends with its paragraph; escaped line breaks split a value; the cosine alignment keeps the
  // seed-literal sentences.
  in.answer = "{\"answer\": \"Read each line with json.loads.\\nSkip empty lines.\"\n\nLet me know.";
  r = ksodi::compute_o0(in, {}, tfidf_fn());
  units.clear();
  for (const auto &s : r.sentences) units.push_back(in.answer.substr(s.start, s.length));
  CHECK(units == std::vector<std::string>{"Read each line with json.loads.", "Skip empty lines.", "Let me know."});
  ksodi::O0Params cosine;
  cosine.alignment = ksodi::Alignment::Cosine;
  CHECK(ksodi::compute_o0(in, cosine, tfidf_fn()).n_sent == 2);
  // Not JSON: a bracketed reference or a link at the start of a paragraph.
  CHECK(ksodi::text::split_claims("[1] The fee is 5 euros.").size() == 1);
  CHECK(ksodi::text::split_claims("[Docs](https://x.org) say the fee is 5 euros.").size() == 1);
}

TEST_CASE("text: code in a JSON string value is recognised, prose is not", "[support]") {
  using ksodi::text::looks_like_code;
  CHECK(looks_like_code("import json\\nrows = [json.loads(l) for l in f]"));
  CHECK(looks_like_code("df.groupby('country').agg({'revenue': 'sum'})"));
  CHECK(looks_like_code("SELECT name FROM users WHERE id = 3;"));
  CHECK(looks_like_code("def f(x):\\n    return x + 1"));
  CHECK(looks_like_code("const total = items.reduce((a, b) => a + b, 0);"));
  CHECK_FALSE(looks_like_code("Each non-empty line is parsed with json.loads(line)."));
  CHECK_FALSE(looks_like_code("Set the limit to 5 (the default) in the settings."));
  CHECK_FALSE(looks_like_code("Return the device within 30 days."));
  CHECK_FALSE(looks_like_code("Die Frist beträgt drei Monate (§ 5 Abs. 2)."));
  CHECK_FALSE(looks_like_code("python"));
  // Words that start code and prose alike need a second sign of code.
  CHECK_FALSE(looks_like_code("If the file is empty skip it"));
  CHECK_FALSE(looks_like_code("Let me know if the export works for you"));
  CHECK_FALSE(looks_like_code("For large files use the streaming reader\\nWith small ones either works"));
  CHECK_FALSE(looks_like_code("Select the rows you need and press Delete"));
  CHECK(looks_like_code("print(len(rows))"));
  CHECK(looks_like_code("for row in rows: total += row[2]"));
}

// Hostile sizes: a 300 KB "word" and an answer of 20,000 distinct words against a large document must stay
// (near) linear — quadratic rules would hang here. No time is asserted; ctest's timeout bounds the run.
TEST_CASE("support: a huge word and many distinct words stay linear", "[support]") {
  std::string word(300000, 'a');
  for (std::size_t i = 0; i < word.size(); i += 7) word[i] = static_cast<char>('b' + i % 20);
  auto letters = [](int i) {  // a distinct lowercase letter string per i (no digits: digits make names)
    std::string s;
    for (; i > 0 || s.empty(); i /= 26) s.push_back(static_cast<char>('a' + i % 26));
    return s;
  };
  std::string many, doc;
  for (int i = 0; i < 20000; ++i) {
    many += "kündigungs" + letters(i) + "wort ";  // compounds whose parts the document lacks
    doc += "vertrags" + letters(i) + "frist ";
  }
  std::vector<DocIndex> d;
  d.emplace_back(doc, Lang::De);
  auto a = best_support(sentence_terms("Das " + word + " gilt.", Lang::De), d);
  CHECK(a.missing.size() == 2);  // the huge word and "gilt"
  auto b = best_support(sentence_terms(many, Lang::De), d);
  CHECK(b.missing.size() == 20000);
}

// An answer of 20,000 sentences with distinct words through the whole operator: linear (ctest's timeout bounds it).
TEST_CASE("O0 support: a very long answer stays linear", "[support][o0]") {
  ksodi::O0Input in;
  for (int i = 0; i < 20000; ++i) in.answer += "Word" + std::string(1, static_cast<char>('a' + i % 26)) + std::to_string(i) + " holds. ";
  in.docs = {{"d", "Nothing here holds."}};
  auto r = ksodi::compute_o0(in, {}, tfidf_fn());
  CHECK(r.n_sent == 20000);
  CHECK(r.n_unsupported == 20000);  // each names a thing (a letter-digit name) the document lacks
}

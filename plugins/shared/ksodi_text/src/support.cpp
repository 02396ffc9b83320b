#include "ksodi/support.hpp"

#include <libstemmer.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ksodi/text.hpp"

namespace ksodi::support {

namespace {

// Stop words: function words, auxiliaries, pronouns, particles and greetings — words that carry no claim of their
// own. Lowercase; matched against lowercased tokens (apostrophes split tokens: "don't" → "don" "t").
const std::unordered_set<std::string_view> &stop_en() {
  static const std::unordered_set<std::string_view> s{
      "a", "about", "above", "after", "again", "against", "ai", "all", "also", "am", "an", "and", "any", "are",
      "aren", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "ca",
      "can", "cannot", "could", "couldn", "did", "didn", "do", "does", "doesn", "doing", "don", "down", "during",
      "each", "either", "else", "even", "ever", "every", "few", "for", "from", "further", "had", "hadn", "has",
      "hasn", "have", "haven", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how",
      "i", "if", "in", "into", "is", "isn", "it", "its", "itself", "just", "let", "ll", "me", "might", "more",
      "most", "much", "must", "mustn", "my", "myself", "neither", "no", "nor", "not", "now", "of", "off", "on",
      "once", "one", "only", "or", "other", "ought", "our", "ours", "ourselves", "out", "over", "own", "re", "same",
      "shall", "shan", "she", "should", "shouldn", "so", "some", "such", "than", "that", "the", "their", "theirs",
      "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "thus", "to", "too",
      "under", "until", "up", "upon", "us", "ve", "very", "was", "wasn", "we", "were", "weren", "what", "when",
      "where", "whether", "which", "while", "who", "whom", "whose", "why", "will", "with", "wo", "won", "would",
      "wouldn", "yes", "yet", "you", "your", "yours", "yourself", "yourselves", "oh", "ok", "okay", "hi",
      "hello", "hey", "well", "please", "thanks", "thank",
      // more function words: conjunctions, adverbs of connection, prepositions, modal forms
      "however", "therefore", "hence", "although", "though", "since", "unless", "whereas", "may", "still",
      "already", "instead", "etc", "via", "within", "without", "across", "along", "among", "around", "behind",
      "beyond", "despite", "except", "inside", "outside", "toward", "towards", "onto", "throughout", "whatever",
      "whenever", "wherever", "whoever", "moreover", "furthermore", "nevertheless", "otherwise", "meanwhile",
      "anyway", "else", "upon", "per", "s", "t", "d", "m",
      // attribution words: they point at a source (O0's T counts them), they state nothing themselves
      "according", "see", "cf"};
  return s;
}
const std::unordered_set<std::string_view> &stop_de() {
  static const std::unordered_set<std::string_view> s{
      "aber", "alle", "allem", "allen", "aller", "alles", "als", "also", "am", "an", "andere", "anderem", "anderen",
      "anderer", "anderes", "auch", "auf", "aus", "bei", "beim", "bin", "bis", "bist", "da", "dabei", "dadurch",
      "daher", "damit", "dann", "darauf", "darin", "darum", "das", "dass", "daß", "dem", "den", "denn", "der", "des",
      "deshalb", "dessen", "die", "dies", "diese", "diesem", "diesen", "dieser", "dieses", "doch", "dort", "du",
      "durch", "ein", "eine", "einem", "einen", "einer", "eines", "er", "es", "etwa", "euch", "euer", "eure",
      "für", "gegen", "hab", "habe", "haben", "hat", "hatte", "hatten", "hier", "hin", "ich", "ihm", "ihn", "ihnen",
      "ihr", "ihre", "ihrem", "ihren", "ihrer", "ihres", "im", "in", "indem", "ins", "ist", "ja", "jede", "jedem",
      "jeden", "jeder", "jedes", "jedoch", "jene", "kann", "kannst", "können", "könnte", "man", "manche", "mich",
      "mir", "mit", "muss", "musst", "müssen", "nach", "nein", "nicht", "nichts", "noch", "nun", "nur", "ob",
      "oder", "ohne", "sehr", "sein", "seine", "seinem", "seinen", "seiner", "seines", "sich", "sie", "sind", "so",
      "solche", "soll", "sollte", "sondern", "sonst", "über", "um", "und", "uns", "unser", "unsere", "unter",
      "vom", "von", "vor", "wann", "war", "waren", "warum", "was", "weil", "welche", "welchem", "welchen",
      "welcher", "welches", "wenn", "wer", "werde", "werden", "wie", "wieder", "will", "wir", "wird", "wirst",
      "wo", "wurde", "wurden", "zu", "zum", "zur", "zwar", "zwischen", "bitte", "danke", "gern", "gerne", "mal",
      "eben", "schon", "hallo",
      // more function words: conjunctions, adverbs of connection, prepositions, pronominal adverbs, modal forms
      "sowie", "sowohl", "bzw", "beziehungsweise", "allerdings", "außerdem", "zudem", "somit", "bereits", "immer",
      "sodass", "falls", "sofern", "solange", "obwohl", "während", "nachdem", "bevor", "seit", "seitdem",
      "innerhalb", "außerhalb", "gegenüber", "statt", "anstatt", "trotz", "wegen", "pro", "ans", "aufs", "übers", "dazu",
      "darüber", "davon", "dafür", "dagegen", "daran", "daraus", "hierzu", "hierfür", "wobei", "womit", "wodurch",
      "worauf", "worden", "wäre", "wären", "würde", "würden", "hätte", "hätten", "sei", "seien", "könnten",
      "müsste", "sollen", "sollten", "darf", "dürfen", "mag", "möchte", "möchten", "wollen", "etwas", "einige",
      "einigen", "einiger", "mehrere", "beide", "beiden", "ganz", "gar", "eher", "sogar", "erst", "dich", "dir",
      "dein", "deine", "deinen", "deinem", "deiner", "euren", "eurem", "unseren", "unserem", "unserer", "hast",
      "habt", "seid", "wart", "wirst", "werdet", "kein", "keine", "keinen", "keinem", "keiner", "keines",
      // attribution words (see above)
      "laut", "gemäß", "zufolge", "siehe", "vgl"};
  return s;
}

// Number words that stand for digits ("drei Jahre" = "3 Jahre"). "one"/"ein" are left out: mostly articles.
const std::unordered_map<std::string_view, std::string_view> &number_words() {
  static const std::unordered_map<std::string_view, std::string_view> m{
      {"two", "2"},    {"three", "3"},  {"four", "4"},   {"five", "5"},   {"six", "6"},     {"seven", "7"},
      {"eight", "8"},  {"nine", "9"},   {"ten", "10"},   {"eleven", "11"}, {"twelve", "12"}, {"zwei", "2"},
      {"drei", "3"},   {"vier", "4"},   {"fünf", "5"},   {"sechs", "6"},  {"sieben", "7"},  {"acht", "8"},
      {"neun", "9"},   {"zehn", "10"},  {"elf", "11"},   {"zwölf", "12"},
      // ordinals ("am dritten Werktag" = "am 3. Werktag"); "first"/"second"/"erste" are left out (ambiguous)
      {"third", "3"},  {"fourth", "4"}, {"fifth", "5"},  {"sixth", "6"},  {"seventh", "7"}, {"eighth", "8"},
      {"ninth", "9"},  {"tenth", "10"}, {"eleventh", "11"}, {"twelfth", "12"}};
  return m;
}

// Units written as a symbol or a word: "9,99 €" = "9,99 Euro" = "9.99 EUR", "20 %" = "20 Prozent".
const std::unordered_map<std::string_view, std::string_view> &unit_words() {
  static const std::unordered_map<std::string_view, std::string_view> m{
      {"€", "eur"},     {"euro", "eur"},       {"euros", "eur"},   {"eur", "eur"},     {"%", "percent"},
      {"prozent", "percent"}, {"percent", "percent"}, {"£", "gbp"}, {"gbp", "gbp"},
      // data sizes: "1 GB" = "1 Gigabyte", "0,49 € pro MB" = "pro Megabyte" (the same in German and English)
      {"kb", "kilobyte"}, {"kilobyte", "kilobyte"}, {"kilobytes", "kilobyte"}, {"mb", "megabyte"},
      {"megabyte", "megabyte"}, {"megabytes", "megabyte"}, {"gb", "gigabyte"}, {"gigabyte", "gigabyte"},
      {"gigabytes", "gigabyte"}, {"tb", "terabyte"}, {"terabyte", "terabyte"}, {"terabytes", "terabyte"}};
  return m;
}

// German ordinal adjectives: zweite(n|r|s|m), dritte…, vierte… (not "achte": also the verb "achten").
std::string_view german_ordinal(std::string_view low) {
  static const std::pair<std::string_view, std::string_view> stems[] = {
      {"zweit", "2"}, {"dritt", "3"}, {"viert", "4"}, {"fünft", "5"}, {"sechst", "6"}, {"siebt", "7"},
      {"neunt", "9"}, {"zehnt", "10"}, {"elft", "11"}, {"zwölft", "12"}};
  for (const auto &[st, digits] : stems) {
    if (low.size() < st.size() + 1 || low.size() > st.size() + 2 || low.compare(0, st.size(), st) != 0) continue;
    std::string_view end = low.substr(st.size());
    if (end == "e" || end == "en" || end == "er" || end == "es" || end == "em") return digits;
  }
  return {};
}

// Source references are traceability (O0's T), not claims: "[HB 4.2]", "[1]", "(kb-tarif-014)", "(Kap. 7.2)",
// "(siehe Abschnitt 3)" are blanked out before a sentence's terms are taken. A bracket of at most 40 bytes
// (not a markdown link) or a parenthesis of at most 40 bytes that starts with a reference word or holds an id
// (letters and digits joined by - or _).
std::string mask_references(std::string_view s) {
  if (s.find_first_of("[(") == std::string_view::npos) return std::string(s);
  static constexpr std::string_view heads[] = {"kap", "kapitel", "s.", "seite", "abschnitt", "abs.", "section", "sec.",
                                               "p.", "pp.", "page", "doc", "dokument", "quelle", "source", "ref",
                                               "vgl", "cf.", "art.", "anhang", "appendix", "chapter", "siehe", "see", "§"};
  std::string out(s);
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '[' && s[i] != '(') continue;
    const char close = s[i] == '[' ? ']' : ')';
    std::size_t j = s.find(close, i + 1);
    if (j == std::string_view::npos || j - i > 40) continue;
    std::string_view in = s.substr(i + 1, j - i - 1);
    bool ref = false;
    if (s[i] == '[') {
      ref = !(j + 1 < s.size() && s[j + 1] == '(');  // [text](url) is a link
    } else {
      std::string low;
      text::to_lower_append(text::trim(in), low);
      for (auto h : heads)
        if (low.compare(0, h.size(), h) == 0 && (low.size() == h.size() || !std::isalpha(static_cast<unsigned char>(low[h.size()])) || h.back() == '.'))
          ref = true;
      // an id: a letter-digit mix joined by - or _ ("kb-tarif-014", "HB_4")
      bool joined = false, digit = false, space = false;
      for (char c : in) {
        joined |= c == '-' || c == '_';
        digit |= c >= '0' && c <= '9';
        space |= c == ' ';
      }
      ref |= joined && digit && !space;
    }
    if (ref) std::fill(out.begin() + static_cast<std::ptrdiff_t>(i), out.begin() + static_cast<std::ptrdiff_t>(j) + 1, ' ');
    i = j;
  }
  return out;
}

bool is_stop(std::string_view lowered, Lang lang) {
  return (lang == Lang::De ? stop_de() : stop_en()).count(lowered) > 0;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// ASCII case-insensitive equality with a lowercase word.
bool ascii_ieq(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    if (c != lower[i]) return false;
  }
  return true;
}

// A word token of a text, as written.
struct Token {
  std::string_view surface;
  std::size_t index = 0;  // position among the text's tokens
  bool first_upper = false, inner_upper = false, has_digit = false, has_letter = false;
  int letters = 0, uppers = 0;
};

// Tokens = maximal runs of word code points; a token starting with a digit also runs through . , : / between
// digits ("9,99", "01.03.2023", "10:30", "24/7").
// One code point at i: ASCII inline (the common case), the rest through ksodi::text.
struct Cp {
  char32_t cp, lower;
  int len;
  bool word;
};
inline Cp cp_at(std::string_view s, std::size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    const bool upper = c >= 'A' && c <= 'Z';
    const bool word = upper || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    return {c, upper ? static_cast<char32_t>(c + 32) : c, 1, word};
  }
  text::Decoded d = text::decode(s, i);
  const char32_t l = text::lower_cp(d.cp);
  return {d.cp, l, d.len, text::is_word_cp(l)};
}

template <class F> void for_each_token(std::string_view s, F &&f) {
  std::size_t i = 0, n = s.size(), idx = 0;
  while (i < n) {
    Cp c = cp_at(s, i);
    if (!c.word) {
      if (c.cp == U'€' || c.cp == U'%' || c.cp == U'£') {  // unit symbols stand for words ("€" = "Euro")
        Token sym;
        sym.surface = s.substr(i, static_cast<std::size_t>(c.len));
        sym.index = idx++;
        f(sym);
      }
      i += static_cast<std::size_t>(c.len);
      continue;
    }
    Token t;
    const std::size_t start = i;
    const bool numeric_start = is_digit(s[i]);
    bool first = true;
    while (i < n) {
      c = cp_at(s, i);
      if (!c.word) {
        if (numeric_start && (s[i] == '.' || s[i] == ',' || s[i] == ':' || s[i] == '/') && i + 1 < n && is_digit(s[i + 1]) &&
            is_digit(s[i - 1])) {
          ++i;
          continue;
        }
        break;
      }
      const bool digit = c.cp < 0x80 && is_digit(static_cast<char>(c.cp));
      t.has_digit |= digit;
      if (!digit) {
        ++t.letters;
        t.has_letter = true;
        if (c.lower != c.cp) {
          ++t.uppers;
          if (first) t.first_upper = true;
          else t.inner_upper = true;
        }
      }
      first = false;
      i += static_cast<std::size_t>(c.len);
    }
    t.surface = s.substr(start, i - start);
    t.index = idx++;
    f(t);
  }
}

// A first-person singular pronoun: the speaker (see support.hpp). `prev` is the token before (nullptr at the
// start): English "I" right after a capitalised word inside the sentence, with only blanks between, is a
// numeral ("World War I", "Elizabeth I", "Type I"). "mine" (also a noun) and German "meinen" (also a verb) are
// left out.
bool speaker_pronoun(const Token &t, const Token *prev, Lang lang) {
  const std::string_view w = t.surface;
  if (w.empty() || w.size() > 6 || t.has_digit) return false;
  const char c0 = w[0];
  if (c0 != 'i' && c0 != 'I' && c0 != 'm' && c0 != 'M') return false;  // every pronoun below starts so
  if (lang == Lang::De) {
    for (std::string_view p : {"ich", "mich", "mir", "mein", "meine", "meinem", "meiner", "meines"})
      if (ascii_ieq(w, p)) return true;
    return false;
  }
  if (w == "I") {
    if (prev == nullptr || !prev->first_upper || prev->index == 0) return true;
    const char *gap = prev->surface.data() + prev->surface.size();
    for (; gap < w.data(); ++gap)
      if (*gap != ' ') return true;  // "…, I": punctuation between, so the pronoun
    return false;
  }
  for (std::string_view p : {"i", "me", "my", "myself"})
    if (ascii_ieq(w, p)) return true;
  return false;
}

std::string number_key(std::string_view surface) {
  // "4th", "3rd", "2nd", "1st" are the numbers themselves
  if (surface.size() >= 3) {
    std::string_view suf = surface.substr(surface.size() - 2);
    if ((suf == "st" || suf == "nd" || suf == "rd" || suf == "th") && is_digit(surface[surface.size() - 3]))
      surface.remove_suffix(2);
  }
  std::string k;
  k.reserve(surface.size());
  for (char c : surface) k.push_back(c == ',' ? '.' : static_cast<char>(text::lower_cp(static_cast<unsigned char>(c))));
  return k;
}

struct Stemmers {
  sb_stemmer *en = nullptr, *de = nullptr;
  std::unordered_map<std::string, std::string> cache[2];
  Stemmers() : en(sb_stemmer_new("english", "UTF_8")), de(sb_stemmer_new("german", "UTF_8")) {}
  ~Stemmers() {
    if (en != nullptr) sb_stemmer_delete(en);
    if (de != nullptr) sb_stemmer_delete(de);
  }
  Stemmers(const Stemmers &) = delete;
  Stemmers &operator=(const Stemmers &) = delete;
};
Stemmers &stemmers() {
  thread_local Stemmers st;
  return st;
}

// What a token (as written) is for matching, per language; computed once per distinct token and thread.
struct Analysis {
  enum Class : std::uint8_t { Stop, Digits, NumberWord, Unit, Word } cls = Word;
  std::uint32_t key = 0;    // Digits/NumberWord: canonical number; Word/Stop: folded stem
  std::uint32_t exact = 0;  // folded lowercase surface (Digits: the canonical number)
};

// Hash maps keyed by std::string that are looked up with string_views (no key string built per lookup).
struct SvHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <class V> using SvMap = std::unordered_map<std::string, V, SvHash, std::equal_to<>>;

using text::hash_bytes;

// Token → Analysis (the hottest lookup: once per token of every answer and document). The table holds indices
// into keys_/values_.
class AnalysisTable {
 public:
  const Analysis *find(std::string_view k, std::uint64_t h) const {
    const Slot *s = slots_.find(h, [&](const Slot &e) { return keys_[e.index] == k; });
    return s != nullptr ? &values_[s->index] : nullptr;
  }
  void insert(std::string_view k, std::uint64_t h, const Analysis &a) {
    slots_.insert({h, static_cast<std::uint32_t>(keys_.size())});
    keys_.emplace_back(k);
    values_.push_back(a);
  }
  std::size_t size() const { return keys_.size(); }
  void clear() {
    slots_ = text::ProbeTable<Slot>(kSlots);  // frees the grown table's memory
    keys_.clear();
    values_.clear();
  }

 private:
  static constexpr std::size_t kSlots = 1024;
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
  struct Slot {
    std::uint64_t hash = 0;
    std::uint32_t index = kEmpty;
    bool empty() const { return index == kEmpty; }
  };
  text::ProbeTable<Slot> slots_{kSlots};
  std::vector<std::string> keys_;
  std::vector<Analysis> values_;
};

struct Vocab {
  SvMap<std::uint32_t> ids;
  std::vector<std::string> strings;
  AnalysisTable analysed[2];
  SvMap<std::vector<CompoundSplit>> compounds;  // German words → their splits (compound_splits)
  // per id: (the DocIndex build that saw it last) << 2 | 1 (in its exact list) | 2 (in its stem list) — dedup
  // without sorting duplicates
  std::vector<std::uint64_t> stamp;
  std::vector<std::uint64_t> term_stamp;  // per id: (sentence pass) << 3 | kinds already taken (sentence_terms)
  std::uint64_t builds = 0;
};
Vocab &vocab() {
  thread_local Vocab v;
  return v;
}

void append_folded(std::string &out, char32_t cp) {
  cp = text::lower_cp(cp);
  const char *rep = nullptr;
  if (cp >= 0xE0 && cp <= 0xFF) {
    static const char *const latin1[32] = {"a", "a", "a", "a",  "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
                                           "d", "n", "o", "o",  "o", "o", "o",  nullptr, "o", "u", "u", "u", "u", "y", "th", "y"};
    rep = latin1[cp - 0xE0];
  } else if (cp == 0xDF) {
    rep = "ss";
  } else if (cp >= 0x100 && cp <= 0x17F) {
    struct R {
      char32_t lo, hi;
      const char *to;
    };
    static const R ranges[] = {{0x100, 0x105, "a"}, {0x106, 0x10D, "c"}, {0x10E, 0x111, "d"}, {0x112, 0x11B, "e"},
                               {0x11C, 0x123, "g"}, {0x124, 0x127, "h"}, {0x128, 0x131, "i"}, {0x134, 0x135, "j"},
                               {0x136, 0x138, "k"}, {0x139, 0x142, "l"}, {0x143, 0x14B, "n"}, {0x14C, 0x151, "o"},
                               {0x152, 0x153, "oe"}, {0x154, 0x159, "r"}, {0x15A, 0x161, "s"}, {0x162, 0x167, "t"},
                               {0x168, 0x173, "u"}, {0x174, 0x175, "w"}, {0x176, 0x178, "y"}, {0x179, 0x17E, "z"}};
    for (const R &r : ranges)
      if (cp >= r.lo && cp <= r.hi) rep = r.to;
  }
  if (rep != nullptr) out += rep;
  else text::append_utf8(out, cp);
}

}  // namespace

const char *lang_name(Lang l) { return l == Lang::De ? "de" : "en"; }

namespace {
Analysis analyse(std::string_view surface, Lang lang);
}

void count_stop_words(std::string_view s, int &en, int &de) {
  // The first ~100 words tell the language; a cut inside a word or a UTF-8 sequence only drops that word.
  constexpr std::size_t kSample = 640;
  if (s.size() > kSample) s = s.substr(0, kSample);
  for_each_token(s, [&](const Token &t) {
    en += analyse(t.surface, Lang::En).cls == Analysis::Stop ? 1 : 0;
    de += analyse(t.surface, Lang::De).cls == Analysis::Stop ? 1 : 0;
  });
}

Lang detect_language(std::string_view s) {
  int en = 0, de = 0;
  count_stop_words(s, en, de);
  return de > en ? Lang::De : Lang::En;
}

std::string fold(std::string_view w) {
  std::string out;
  out.reserve(w.size());
  for (std::size_t i = 0; i < w.size();) {
    unsigned char c = static_cast<unsigned char>(w[i]);
    if (c < 0x80) {
      out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : static_cast<char>(c));
      ++i;
      continue;
    }
    text::Decoded d = text::decode(w, i);
    append_folded(out, d.cp);
    i += static_cast<std::size_t>(d.len);
  }
  return out;
}

std::string_view stem(std::string_view lowered, Lang lang) {
  Stemmers &st = stemmers();
  sb_stemmer *s = lang == Lang::De ? st.de : st.en;
  if (s == nullptr) return lowered;  // no stemmer for the language: the word itself
  auto &cache = st.cache[lang == Lang::De ? 1 : 0];
  auto [it, inserted] = cache.try_emplace(std::string(lowered));
  if (inserted) {
    const sb_symbol *r = sb_stemmer_stem(s, reinterpret_cast<const sb_symbol *>(lowered.data()), static_cast<int>(lowered.size()));
    if (r != nullptr) it->second.assign(reinterpret_cast<const char *>(r), static_cast<std::size_t>(sb_stemmer_length(s)));
    else it->second.assign(lowered);
  }
  return it->second;
}

std::uint32_t intern(std::string_view str) {
  Vocab &v = vocab();
  if (auto it = v.ids.find(str); it != v.ids.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(v.strings.size());
  v.ids.emplace(std::string(str), id);
  v.strings.emplace_back(str);
  return id;
}

std::string_view interned(std::uint32_t id) { return vocab().strings[id]; }

std::string_view Term::key() const { return interned(key_id); }

void begin_unit() {
  Vocab &v = vocab();
  // Bounds per thread: a language's working vocabulary fits well inside, while unique tokens (document ids,
  // numbers, names) would otherwise grow it with every unit (~0.3 KB a unit) — clearing costs a re-stem.
  constexpr std::size_t kMaxStrings = 60000, kMaxAnalysed = 40000, kMaxStems = 40000;
  if (v.strings.size() > kMaxStrings || v.analysed[0].size() + v.analysed[1].size() + v.compounds.size() > kMaxAnalysed) {
    v.ids.clear();
    v.strings.clear();
    v.analysed[0].clear();
    v.analysed[1].clear();
    v.compounds.clear();
    v.stamp.clear();
    v.term_stamp.clear();
  }
  Stemmers &st = stemmers();
  for (auto &c : st.cache)
    if (c.size() > kMaxStems) c.clear();
}

namespace {

Analysis analyse(std::string_view surface, Lang lang) {
  AnalysisTable &cache = vocab().analysed[lang == Lang::De ? 1 : 0];
  const std::uint64_t h = hash_bytes(surface);
  if (const Analysis *found = cache.find(surface, h)) return *found;
  Analysis a;
  if (is_digit(surface[0])) {
    a.cls = Analysis::Digits;
    a.key = a.exact = intern(number_key(surface));
  } else {
    std::string low;
    text::to_lower_append(surface, low);
    const std::string folded_stem = fold(stem(low, lang));
    a.key = intern(folded_stem);
    a.exact = intern(fold(low));
    auto nw = number_words().find(low);
    std::string_view ordinal = lang == Lang::De ? german_ordinal(low) : std::string_view{};
    auto unit = unit_words().find(low);
    if (is_stop(low, lang)) {
      a.cls = Analysis::Stop;
    } else if (nw != number_words().end() || !ordinal.empty()) {
      a.cls = Analysis::NumberWord;
      a.key = intern(ordinal.empty() ? nw->second : ordinal);
    } else if (unit != unit_words().end()) {
      a.cls = Analysis::Unit;
      a.key = a.exact = intern(unit->second);
    }
  }
  cache.insert(surface, h, a);
  return a;
}

}  // namespace

std::vector<Term> sentence_terms(std::string_view sentence_text, Lang lang) {
  Vocab &v = vocab();
  const std::string masked = mask_references(sentence_text);
  thread_local std::vector<Token> tokens;
  tokens.clear();
  int letters = 0, uppers = 0;
  for_each_token(masked, [&](const Token &t) {
    letters += t.letters;
    uppers += t.uppers;
    tokens.push_back(t);
  });
  // A shouted sentence (mostly capitals) says nothing about names by its capitals.
  const bool shouted = letters >= 12 && uppers * 10 >= letters * 7;
  const std::uint64_t pass = ++v.builds << 3;  // marks (kind bits) for "this term is already in `out`"
  std::vector<Term> out;
  bool speaker = false;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    const Token &t = tokens[k];
    if (!speaker && speaker_pronoun(t, k > 0 ? &tokens[k - 1] : nullptr, lang)) {
      speaker = true;
      Term term;
      term.kind = TermKind::Speaker;
      term.key_id = term.stem_id = intern("\x01speaker");
      term.shown = std::string(t.surface) + " (speaker)";
      out.push_back(std::move(term));
      continue;
    }
    const Analysis a = analyse(t.surface, lang);
    Term term;
    switch (a.cls) {
      case Analysis::Stop:
        continue;
      case Analysis::Digits:
      case Analysis::NumberWord:
        term.kind = TermKind::Number;
        term.key_id = term.stem_id = a.key;
        break;
      case Analysis::Unit:
        term.kind = TermKind::Word;
        term.key_id = term.stem_id = a.key;
        break;
      case Analysis::Word: {
        if (!t.has_digit && t.letters < 2) continue;  // single letters: initials, split contractions
        const bool name = t.has_digit || (!shouted && (t.inner_upper || (lang == Lang::En && t.first_upper && t.index > 0)));
        term.kind = name ? TermKind::Name : TermKind::Word;
        term.stem_id = a.key;
        term.key_id = name ? a.exact : a.key;
        break;
      }
    }
    // each term once: a mark per (key, kind) in this pass (linear in the sentence, however long it is)
    if (v.term_stamp.size() <= term.key_id) v.term_stamp.resize(std::max<std::size_t>(term.key_id + 1, v.term_stamp.size() * 2), 0);
    std::uint64_t &st = v.term_stamp[term.key_id];
    const std::uint64_t bit = std::uint64_t{1} << static_cast<unsigned>(term.kind);
    if ((st & ~std::uint64_t{7}) != pass) st = pass;
    else if ((st & bit) != 0) continue;
    st |= bit;
    term.shown = std::string(t.surface);
    out.push_back(std::move(term));
  }
  return out;
}

bool courtesy_only(const std::vector<Term> &terms) {
  // Folded lowercase forms. Words that also carry content elsewhere ("help" in "help desk") only count here when
  // the whole sentence consists of such words.
  static const std::unordered_set<std::string_view> words{
      // English
      "sure", "certainly", "course", "glad", "happy", "help", "helps", "helped", "helpful", "hope", "let", "know",
      "need", "anything", "else", "question", "questions", "feel", "free", "ask", "reach", "welcome", "go", "great",
      "good", "luck", "day", "nice", "hear", "sorry", "apologies", "problem", "pleasure", "assist", "further",
      "hesitate", "contact", "regards",
      // German (folded: ä → a, ö → o, ü → u, ß → ss)
      "gerngeschehen", "hoffe", "hilft", "weiterhilft", "helfen", "geholfen", "weitere", "weiteren", "fragen",
      "frage", "melden", "jederzeit", "freue", "freut", "schonen", "schoner", "tag", "viel", "erfolg", "klar",
      "naturlich", "selbstverstandlich", "super", "prima", "leid", "tut", "entschuldigung", "wenden", "bescheid",
      "sagen", "geben", "gruße", "grussen", "freundlichen", "unterstutzen", "unterstutzung", "kein", "keine"};
  bool courtesy = false;
  for (const Term &t : terms) {
    if (t.kind == TermKind::Speaker) continue;
    if (t.kind != TermKind::Word || words.count(fold(t.shown)) == 0) return false;
    courtesy = true;
  }
  return courtesy;
}

void IdSet::build(const std::vector<std::uint32_t> &ids) {
  std::size_t cap = 16;
  while (cap < 2 * ids.size()) cap *= 2;  // load <= 1/2: short probe runs
  slots_.assign(cap, kEmpty);
  mask_ = cap - 1;
  for (std::uint32_t id : ids) {
    std::size_t i = slot(id);
    while (slots_[i] != kEmpty && slots_[i] != id) i = (i + 1) & mask_;
    slots_[i] = id;
  }
}

namespace {
// doc_<n> / tool_<n>: the ids the readers make up for documents that came without one.
bool generated_id(std::string_view id) {
  for (std::string_view p : {"doc_", "tool_"}) {
    if (id.size() <= p.size() || id.compare(0, p.size(), p) != 0) continue;
    return std::all_of(id.begin() + static_cast<std::ptrdiff_t>(p.size()), id.end(), [](char c) { return is_digit(c); });
  }
  return false;
}
}  // namespace

DocIndex::DocIndex(std::string_view s, Lang lang, std::string_view doc_id) : lang_(lang), text_(s) {
  Vocab &v = vocab();
  const std::uint64_t build = ++v.builds << 2;
  std::vector<std::uint32_t> exact;
  auto add = [&](std::vector<std::uint32_t> &to, std::uint32_t id, std::uint64_t mark) {
    if (v.stamp.size() <= id) v.stamp.resize(std::max<std::size_t>(id + 1, v.stamp.size() * 2), 0);
    std::uint64_t &st = v.stamp[id];
    if ((st & ~std::uint64_t{3}) != build) st = build;
    else if ((st & mark) != 0) return;  // already in this list
    st |= mark;
    to.push_back(id);
  };
  auto index = [&](const Token &t) {
    const Analysis a = analyse(t.surface, lang);
    add(exact, a.exact, 1);
    if (a.cls == Analysis::NumberWord) add(exact, a.key, 1);
    else if (a.cls != Analysis::Digits) add(stems_, a.key, 2);
  };
  if (!doc_id.empty() && !generated_id(doc_id)) for_each_token(doc_id, index);
  for_each_token(s, index);
  stem_set_.build(stems_);
  exact_set_.build(exact);
}

namespace {

// The ways a German word splits into a modifier and a head, each part by its interned exact form and stem,
// computed once per word and thread: <left><right>, the left part possibly with a linking element removed
// (Kündigung-s-frist), the right part possibly split once more.
std::vector<CompoundSplit> split_compound(std::string_view w, int depth) {
  constexpr std::size_t kMinPart = 3;
  std::vector<CompoundSplit> out;
  auto part = [](std::string_view p) {
    return CompoundPart{intern(p), intern(fold(stem(std::string(p), Lang::De)))};
  };
  for (std::size_t i = kMinPart; w.size() >= 2 * kMinPart && i + kMinPart <= w.size(); ++i) {
    if ((static_cast<unsigned char>(w[i]) & 0xC0) == 0x80) continue;  // not inside a UTF-8 sequence
    std::string_view left = w.substr(0, i), right = w.substr(i);
    CompoundSplit sp;
    sp.lefts.push_back(part(left));
    for (std::string_view link : {"s", "es", "n", "en", "e"})
      if (left.size() >= kMinPart + link.size() && left.substr(left.size() - link.size()) == link)
        sp.lefts.push_back(part(left.substr(0, left.size() - link.size())));
    sp.right = part(right);
    if (depth == 0) sp.inner = split_compound(right, 1);
    out.push_back(std::move(sp));
  }
  return out;
}

const std::vector<CompoundSplit> &compound_splits(std::string_view w) {
  Vocab &v = vocab();
  if (auto it = v.compounds.find(w); it != v.compounds.end()) return it->second;
  return v.compounds.emplace(std::string(w), split_compound(w, 0)).first->second;
}

}  // namespace

bool DocIndex::compound_found(const std::vector<CompoundSplit> &splits) const {
  auto found = [&](const CompoundPart &p) { return has_exact(p.exact) || has_stem(p.stem); };
  for (const CompoundSplit &s : splits) {
    if (!(found(s.right) || compound_found(s.inner))) continue;
    for (const CompoundPart &l : s.lefts)
      if (found(l)) return true;
  }
  return false;
}

namespace {
constexpr std::size_t kMinHead = 4;       // bytes of a word that may be found as a compound's head
constexpr std::size_t kMaxCompound = 64;  // bytes of the longest word split into compound parts
}  // namespace

bool DocIndex::contains(const Term &t) const {
  switch (t.kind) {
    case TermKind::Number:
      return has_exact(t.key_id);
    case TermKind::Name:
      return has_exact(t.key_id) || has_stem(t.stem_id);
    case TermKind::Speaker:
      return speaks_first_person();
    case TermKind::Word:
      break;
  }
  if (has_stem(t.stem_id)) return true;
  if (lang_ != Lang::De) return false;
  auto [it, inserted] = compound_seen_.try_emplace(t.stem_id, false);
  if (!inserted) return it->second;
  // German: a compound of the document ends in the word ("Frist" ← "Kündigungsfrist") …
  const std::string_view st = interned(t.stem_id);
  bool found = st.size() >= kMinHead && std::binary_search(heads().begin(), heads().end(), hash_bytes(st));
  // … or the word is a compound of the document's words (words longer than any real compound are not split:
  // a hostile 1 MB "word" would otherwise cost quadratic time).
  if (!found && t.shown.size() <= kMaxCompound) found = compound_found(compound_splits(fold(t.shown)));
  it->second = found;
  return found;
}

// Read on the first sentence that asks (most answers have no first-person sentence, so most documents are never
// scanned for it).
bool DocIndex::speaks_first_person() const {
  if (speaker_known_) return speaks_first_person_;
  speaker_known_ = true;
  Token prev;
  bool have_prev = false;
  for_each_token(text_, [&](const Token &t) {
    if (!speaks_first_person_ && speaker_pronoun(t, have_prev ? &prev : nullptr, lang_)) speaks_first_person_ = true;
    prev = t;
    have_prev = true;
  });
  return speaks_first_person_;
}

// The hashes of every head a document compound can have: each stem's suffixes of >= kMinHead bytes that leave
// >= 3 bytes in front. Built on the first German word the stems do not find; sorted for binary search.
const std::vector<std::uint64_t> &DocIndex::heads() const {
  if (heads_built_) return heads_;
  heads_built_ = true;
  for (std::uint32_t id : stems_) {
    const std::string_view s = interned(id);
    for (std::size_t k = kMinHead; k + 3 <= s.size(); ++k) {
      if ((static_cast<unsigned char>(s[s.size() - k]) & 0xC0) == 0x80) continue;  // inside a UTF-8 sequence
      heads_.push_back(hash_bytes(s.substr(s.size() - k)));
    }
  }
  std::sort(heads_.begin(), heads_.end());
  return heads_;
}

double support_in(const std::vector<Term> &terms, const DocIndex &doc) {
  double total = 0, found = 0;
  for (const Term &t : terms) {
    total += t.weight();
    if (doc.contains(t)) found += t.weight();
  }
  return total > 0 ? found / total : 0.0;
}

SentenceSupport best_support(const std::vector<Term> &terms, const std::vector<DocIndex> &docs) {
  SentenceSupport r;
  for (const Term &t : terms) r.weight += t.weight();
  for (std::size_t i = 0; i < docs.size(); ++i) {
    double s = support_in(terms, docs[i]);
    if (r.best_doc < 0 || s > r.support) {
      r.support = s;
      r.best_doc = static_cast<int>(i);
    }
  }
  if (r.best_doc >= 0) {
    const DocIndex &d = docs[static_cast<std::size_t>(r.best_doc)];
    for (const Term &t : terms) {
      if (d.contains(t)) {
        r.matched.push_back(t.shown);
      } else {
        r.missing.push_back(t.shown);
        if (t.kind == TermKind::Number || t.kind == TermKind::Name) r.exact_missing.push_back(t.shown);
      }
    }
  }
  return r;
}

}  // namespace ksodi::support

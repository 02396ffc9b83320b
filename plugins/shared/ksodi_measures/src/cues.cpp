#include "ksodi_measures/cues.hpp"

#include "ksodi/text.hpp"

namespace ksodi::full {

using detect::KeywordSet;

const KeywordSet &cues_followup() {
  static const KeywordSet k{
      // German
      "nochmal", "noch mal", "noch einmal", "erneut", "falsch", "stimmt nicht", "nicht das", "nicht was ich",
      "ich wollte", "ich hatte doch", "hatte ich doch", "habe ich doch", "wie gewünscht", "wie verlangt", "vergessen",
      "fehlt", "fehlen", "unübersichtlich", "zu lang", "ungeordnet", "strukturierter", "übersichtlicher",
      "besser strukturier*", "überarbeite*", "formatiere*", "bitte als", "bitte im", "bitte in",
      // English
      "again", "wrong", "not what i asked", "i asked for", "i wanted", "you forgot", "you missed", "missing",
      "please use", "please format", "reformat*", "restructure*", "messy", "hard to read", "too long", "redo",
      "try again", "instead", "still not"};
  return k;
}
const KeywordSet &cues_correction() {
  static const KeywordSet k{
      // German
      "stimmt nicht", "falsch", "nicht korrekt", "nicht richtig", "inkorrekt", "widerspr*", "korrigier*", "irrtum",
      "eigentlich", "dort steht", "steht aber", "im dokument steht", "laut dem neuen", "neue dokument", "neuen dokument",
      "aktualisierte*", "neue version", "neuen version", "du hast gesagt", "sie sagten", "sie haben gesagt",
      // English
      "wrong", "incorrect", "not correct", "not right", "contradict*", "actually", "the document says",
      "the new document", "updated", "new version", "you said", "mistake", "that is not true", "not true"};
  return k;
}
const KeywordSet &cues_backref() {
  static const KeywordSet k{
      // German
      "wie oben", "oben genannt*", "vorhin", "deine antwort", "ihre antwort", "letzte antwort", "vorherige*",
      "davon", "daraus", "darauf", "dazu", "dafür", "damit", "stattdessen", "nochmal", "noch einmal", "erneut",
      "gleiche", "dieselbe*",
      // English
      "above", "earlier", "previous*", "your answer", "your last", "you said", "you mentioned", "again", "instead",
      "the same", "as well", "that table", "that list", "that answer", "it again"};
  return k;
}
const KeywordSet &cues_topic_change() {
  static const KeywordSet k{
      // German
      "anderes thema", "anderen thema", "themawechsel", "themenwechsel", "andere frage", "etwas anderes", "ganz andere*",
      "neues thema", "übrigens", "noch eine andere", "zu etwas anderem",
      // English
      "different topic", "another question", "something else", "something different", "unrelated", "new topic",
      "by the way", "switching", "change of topic", "on another note"};
  return k;
}
const KeywordSet &cues_acknowledge() {
  static const KeywordSet k{
      // German
      "sie haben recht", "du hast recht", "haben recht", "korrektur", "korrigiert", "berichtig*", "entschuldig*",
      "mein fehler", "geirrt", "richtig ist", "richtigstellung", "aktualisiert",
      // English
      "you are right", "you re right", "correction", "corrected", "apolog*", "my mistake", "i was wrong",
      "my error", "the correct", "updated"};
  return k;
}

std::string find_cue(const KeywordSet &set, std::string_view text) {
  text::TokenizedText t;
  t.assign(text);
  const char *hit = set.find(t, false);
  return hit == nullptr ? std::string() : std::string(hit);
}

std::size_t word_count(std::string_view text) {
  std::string low = text::to_lower(text);
  std::size_t n = 0;
  text::for_each_token(low, [&](std::string_view) { ++n; });
  return n;
}

}  // namespace ksodi::full

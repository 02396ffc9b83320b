#include <catch2/catch.hpp>
#include <cmath>

#include "helpers.hpp"


TEST_CASE("TF-IDF: exact smooth idf, L2 rows, cosine", "[tfidf]") {
  std::vector<float> v;
  std::size_t dim = 0;
  evalgraph::embed::TfidfEmbedder().embed({"Apple banana", "apple cherry", ""}, v, dim);
  REQUIRE(dim == 3);  // apple, banana, cherry (first appearance order)
  const double N = 3;
  const double idf_apple = std::log((1 + N) / (1 + 2)) + 1, idf_single = std::log((1 + N) / (1 + 1)) + 1;
  const double norm = std::sqrt(idf_apple * idf_apple + idf_single * idf_single);
  CHECK(v[0] == Approx(idf_apple / norm).epsilon(1e-6));
  CHECK(v[1] == Approx(idf_single / norm).epsilon(1e-6));
  CHECK(v[2] == 0.0f);
  CHECK(ksodi::cosine(v.data(), v.data() + 3, 3) == Approx(idf_apple * idf_apple / (norm * norm)).epsilon(1e-6));
  // The empty text is the zero vector; cosine with it is 0.
  CHECK(v[6] == 0.0f);
  CHECK(v[7] == 0.0f);
  CHECK(ksodi::cosine(v.data(), v.data() + 6, 3) == 0.0);
}

TEST_CASE("TF-IDF: stopwords removed, tf = raw count, umlauts kept", "[tfidf]") {
  std::vector<float> v;
  std::size_t dim = 0;
  evalgraph::embed::TfidfEmbedder().embed({"Die Größe und die GRÖSSE der Straße", "the the and of"}, v, dim);
  REQUIRE(dim == 3);  // größe, grösse, straße
  // Row 0: every term tf 1 and the same idf → 1/sqrt(3) each; row 1 is all stopwords → zero vector.
  CHECK(v[0] == Approx(1.0 / std::sqrt(3.0)).epsilon(1e-6));
  CHECK(v[3] == 0.0f);
  evalgraph::embed::TfidfEmbedder().embed({"x x y", "z"}, v, dim);
  REQUIRE(dim == 3);
  const double idf = std::log(3.0 / 2.0) + 1;
  const double n = std::sqrt(4 * idf * idf + idf * idf);
  CHECK(v[0] == Approx(2 * idf / n).epsilon(1e-6));
  CHECK(v[1] == Approx(idf / n).epsilon(1e-6));
  CHECK(evalgraph::embed::TfidfEmbedder::model_id() == std::string("tfidf-v1"));
}

TEST_CASE("TF-IDF: all-empty input yields zero vectors of dim 1", "[tfidf]") {
  std::vector<float> v;
  std::size_t dim = 0;
  evalgraph::embed::TfidfEmbedder().embed({"", "..."}, v, dim);
  CHECK(dim == 1);
  CHECK(v == std::vector<float>{0.0f, 0.0f});
}

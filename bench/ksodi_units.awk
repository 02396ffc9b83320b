# Generated KSODI evaluation units for the benches (ksodi_throughput.sh, report_bench.sh, shard_bench.sh):
# deterministic (srand 42); sentences drawn from two vocabularies, some with attribution markers, formats
# requested in some system prompts, answers partly grounded in the documents and partly drifting.
#   awk -v n=RECORDS [-v short=1] -f bench/ksodi_units.awk
# Default: an answer of ~1 KB and three retrieved documents of ~1 KB each per unit; short=1: a two-item list
# answer without documents (~1 KB detailed records, for merge figures).
BEGIN {
    srand(42);
    split("tarif vertrag kündigung rechnung frist kunde portal störung router leitung gebühr monat vertragslaufzeit " \
          "policy employee leave request manager approval payroll benefit contract notice period overtime remote " \
          "server deployment container database index query latency cache timeout retry config release", W, " ");
    nw = length(W);
    for (i = 0; i < n; i++) {
      if (short) {
        printf "{\"id\":\"u%d\",\"context_scope_id\":\"bench_%d\",\"system_prompt\":\"Antworte als Liste.\",\"user_text\":\"Erkläre %s?\",\"assistant_text\":\"- %s\\n- %s\"}\n", i, i % 2, W[int(rand()*nw)+1], sentence(), sentence();
        continue;
      }
      docs = "[";
      for (d = 0; d < 3; d++) {
        t = "";
        while (length(t) < 1000) t = t sentence() " ";
        docs = docs (d ? "," : "") "{\"id\":\"d" i "-" d "\",\"text\":\"" t "\"}";
      }
      docs = docs "]";
      a = "";
      while (length(a) < 1000) { a = a (rand() < 0.2 ? "Laut Dokument [1] " : "") sentence() " "; if (rand() < 0.15) a = a "\\n\\n- "; }
      sp = (i % 3 == 0) ? "Du bist ein Assistent. Antworte als Liste mit maximal 5 Punkten." : (i % 3 == 1) ? "You are a support bot. Answer only from the documents, as JSON." : "Beantworte die Frage.";
      printf "{\"id\":\"u%d\",\"context_scope_id\":\"bench_%d\",\"system_prompt\":\"%s\",\"tool_profile\":\"kb_search(query)\",\"user_text\":\"Erkläre bitte %s und %s?\",\"retrieved_docs\":%s,\"assistant_text\":\"%s\"}\n", i, i % 2, sp, W[int(rand()*nw)+1], W[int(rand()*nw)+1], docs, a;
    }
  }
  function sentence(   s, k, m) { m = 6 + int(rand() * 10); s = ""; for (k = 0; k < m; k++) s = s (k ? " " : "") W[int(rand() * nw) + 1]; return toupper(substr(s, 1, 1)) substr(s, 2) "."; }

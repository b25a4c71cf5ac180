// llama.cpp's side of natstudy's GGUF comparison (#41): every method scored in one forward
// pass (positions 0..n-1, no special tokens), tokens/s over the rounds after the first, and the
// cross-entropy (nats, tokens 2..n given their prefix) of each method for a check against
// natstudy's. Methods come NUL-separated in a file. With --last only the last position's logits
// are computed (llama-bench's prompt processing), else every position's (scoring, as
// llama-perplexity does).
#include "llama.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char ** argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s MODEL.gguf METHODS.nul THREADS ROUNDS [--last]\n", argv[0]);
        return 2;
    }
    const char * path = argv[1];
    int threads = atoi(argv[3]);
    int rounds = atoi(argv[4]);
    bool last_only = argc > 5 && strcmp(argv[5], "--last") == 0;

    std::ifstream in(argv[2], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string all = ss.str();
    std::vector<std::string> methods;
    size_t start = 0;
    for (size_t i = 0; i <= all.size(); i++) {
        if (i == all.size() || all[i] == '\0') {
            if (i > start) methods.push_back(all.substr(start, i - start));
            start = i + 1;
        }
    }

    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model * model = llama_model_load_from_file(path, mp);
    if (!model) { fprintf(stderr, "cannot load %s\n", path); return 1; }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);
    const int max_len = llama_model_n_ctx_train(model);

    std::vector<std::vector<llama_token>> toks;
    size_t longest = 0, total = 0;
    for (auto & m : methods) {
        int n = -llama_tokenize(vocab, m.c_str(), (int) m.size(), nullptr, 0, false, false);
        std::vector<llama_token> t(n);
        llama_tokenize(vocab, m.c_str(), (int) m.size(), t.data(), n, false, false);
        if ((int) t.size() > max_len) t.resize(max_len);
        longest = std::max(longest, t.size());
        total += t.size();
        toks.push_back(std::move(t));
    }

    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = longest;
    cp.n_batch = longest;
    cp.n_ubatch = longest;
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "no context\n"); return 1; }

    std::vector<double> ce(toks.size());
    double best = 0, sum_rate = 0;
    for (int r = 0; r < rounds; r++) {
        auto t0 = std::chrono::steady_clock::now();
        for (size_t k = 0; k < toks.size(); k++) {
            auto & t = toks[k];
            llama_memory_clear(llama_get_memory(ctx), true);
            llama_batch b = llama_batch_init(t.size(), 0, 1);
            for (size_t i = 0; i < t.size(); i++) {
                b.token[i] = t[i];
                b.pos[i] = i;
                b.n_seq_id[i] = 1;
                b.seq_id[i][0] = 0;
                b.logits[i] = last_only ? (i + 1 == t.size()) : true;
            }
            b.n_tokens = t.size();
            if (llama_decode(ctx, b) != 0) { fprintf(stderr, "decode failed\n"); return 1; }
            if (!last_only && r == 0 && t.size() > 1) {
                double nll = 0;
                for (size_t i = 1; i < t.size(); i++) {
                    const float * lg = llama_get_logits_ith(ctx, i - 1);
                    double mx = lg[0];
                    for (int v = 1; v < n_vocab; v++) mx = std::max(mx, (double) lg[v]);
                    double z = 0;
                    for (int v = 0; v < n_vocab; v++) z += std::exp(lg[v] - mx);
                    nll += -(lg[t[i]] - mx - std::log(z));
                }
                ce[k] = nll / (t.size() - 1);
            }
            llama_batch_free(b);
        }
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        double rate = total / secs;
        printf("round %d: %zu methods, %zu tokens, %.2f s, %.0f tokens/s\n", r + 1, toks.size(), total, secs, rate);
        if (r > 0) { sum_rate += rate; best = std::max(best, rate); }
    }
    if (rounds > 1) printf("mean after warm-up: %.0f tokens/s (best %.0f), threads %d, %s\n", sum_rate / (rounds - 1), best, threads, last_only ? "last logits only" : "every position's logits");
    if (!last_only) {
        FILE * f = fopen("llama_ce.txt", "w");
        for (double c : ce) fprintf(f, "%.9f\n", c);
        fclose(f);
    }
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}

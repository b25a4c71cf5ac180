# R's ordinal::clmm on the data `natstudy bench report --design likert --mixed N --out DIR`
# writes (DIR/mixed.csv: answer, transformed, participant, item), timed as natstudy times its
# own fit: Rscript crates/stats/bench/clmm.R DIR/mixed.csv
# (r-cran-ordinal from the distribution's packages.)
suppressPackageStartupMessages(library(ordinal))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
d$answer <- factor(d$answer, ordered = TRUE)
d$participant <- factor(d$participant)
d$item <- factor(d$item)
t <- system.time(fit <- clmm(answer ~ transformed + (1 | participant) + (1 | item), data = d, link = "logit"))
cat(sprintf("R clmm: %d responses, %d snippets, %d participants: %.2f s (log-likelihood %.6f, coefficient %.6f, sd participant %.6f, item %.6f)\n",
    nrow(d), nlevels(d$item), nlevels(d$participant), t[["elapsed"]], fit$logLik,
    coef(fit)[["transformed"]], attr(VarCorr(fit)$participant, "stddev"),
    attr(VarCorr(fit)$item, "stddev")))

/**
 * Rerank over a model's provider chain. Identical documents are scored once, requests larger than
 * an upstream's limit are split into batches (scores are absolute, so batches merge exactly), and
 * the ranking is best first with ties in document order.
 *
 * A request names its model by a configured id, by the public alias service-reranker-v1, or by a
 * vendor's model name (rerank-v3.5, jina-reranker-v2-base-multilingual, rerank-2.5…), so that a
 * Cohere, Jina or Voyage client works unchanged: config maps such names to configured models, and
 * the vendors' published names mean the default model unless config says otherwise.
 */
import { ApiError } from '../api/errors.js';
import { DEFAULT_RERANK_MODEL } from '../api/schemas.js';
import type { RerankRequest } from '../api/validate.js';
import type { Logger } from '../server/logger.js';
import type { RerankProvider } from '../providers/types.js';
import type { Deadline } from './deadline.js';
import type { UpstreamCaller } from './upstream.js';

export interface RankedDocument {
  index: number;
  score: number;
}

export interface RerankOutcome {
  provider: string;
  /** The model that scored, as a client may name it: the id asked for, or the configured model an alias stands for. */
  model: string;
  /** Every document, best first. */
  ranking: RankedDocument[];
  /** Tokens the upstream reported, summed over batches; undefined when it reports none. */
  totalTokens?: number;
}

/** A model as a request resolved it: the configured id whose chain serves it, and the name to report. */
export interface ResolvedModel {
  id: string;
  name: string;
  chain: readonly RerankProvider[];
}

export interface RerankAliases {
  /** Names config maps to configured model ids (dialects.rerankAliases). */
  configured: Readonly<Record<string, string>>;
  /** Vendors' published model names, which mean the default model. */
  vendorNames: readonly string[];
}

const aliasKey = (name: string) => name.trim().toLowerCase();

export class RerankGateway {
  /** The model that the public alias service-reranker-v1 (and a request naming no model) means. */
  readonly defaultModel: string | undefined;
  private readonly aliases = new Map<string, string>();

  constructor(
    private readonly models: ReadonlyMap<string, readonly RerankProvider[]>,
    configuredDefault: string | undefined,
    private readonly upstream: UpstreamCaller,
    private readonly logger: Logger,
    aliases: RerankAliases = { configured: {}, vendorNames: [] },
  ) {
    this.defaultModel = configuredDefault ?? (models.has(DEFAULT_RERANK_MODEL) ? DEFAULT_RERANK_MODEL : models.keys().next().value);
    // Configured aliases win over the vendors' names; each resolves to a configured id or the default alias.
    for (const name of aliases.vendorNames) this.aliases.set(aliasKey(name), DEFAULT_RERANK_MODEL);
    for (const [name, model] of Object.entries(aliases.configured)) this.aliases.set(aliasKey(name), model);
  }

  /** Model ids a client may send: the configured ones and the default alias. */
  get modelIds(): string[] {
    const ids = [...this.models.keys()];
    return this.defaultModel !== undefined && !ids.includes(DEFAULT_RERANK_MODEL) ? [DEFAULT_RERANK_MODEL, ...ids] : ids;
  }

  /**
   * The provider chain for a model name: a configured id, the default alias, then an alias (config's,
   * then the vendors' names), case-insensitive after trimming. 503 while no reranker is configured at
   * all; 400 for a name that is none of these.
   */
  resolveModel(model: string): ResolvedModel {
    if (this.models.size === 0) {
      throw new ApiError(503, 'no rerank provider is configured on this gateway; add one under rerank.models in the config');
    }
    const direct = this.byId(model);
    if (direct) return direct;
    const aliased = this.aliases.get(aliasKey(model));
    const target = aliased === undefined ? undefined : this.byId(aliased);
    if (!target) {
      throw new ApiError(
        400,
        `unknown model "${model}"; available: ${this.modelIds.join(', ')}, or a Cohere, Jina or Voyage rerank model name`,
      );
    }
    return target;
  }

  private byId(model: string): ResolvedModel | undefined {
    if (this.models.has(model)) return { id: model, name: model, chain: this.models.get(model)! };
    if (model === DEFAULT_RERANK_MODEL && this.defaultModel !== undefined) {
      return { id: this.defaultModel, name: DEFAULT_RERANK_MODEL, chain: this.models.get(this.defaultModel)! };
    }
    return undefined;
  }

  async rerank(request: RerankRequest, deadline: Deadline): Promise<RerankOutcome> {
    const { provider, model, scores, totalTokens } = await this.score(request.model, request.query, request.documents, deadline);
    const ranking = scores
      .map((score, index) => ({ index, score }))
      .sort((a, b) => b.score - a.score || a.index - b.index);
    return { provider, model, ranking, ...(totalTokens === undefined ? {} : { totalTokens }) };
  }

  /** One score per document, in document order, from the first provider of the model's chain that answers. */
  async score(
    modelName: string,
    query: string,
    documents: readonly string[],
    deadline: Deadline,
  ): Promise<{ provider: string; model: string; scores: number[]; totalTokens?: number }> {
    const { id: model, name, chain } = this.resolveModel(modelName);
    const unique = [...new Set(documents)];
    return this.upstream.firstThatAnswers(chain, 'rerank', deadline, async (provider) => {
      const uniqueScores: number[] = [];
      let totalTokens: number | undefined;
      for (let start = 0; start < unique.length; start += provider.capabilities.maxDocuments) {
        const batch = unique.slice(start, start + provider.capabilities.maxDocuments);
        const reply = await this.upstream.withRetries(provider.name, 'rerank', deadline, () =>
          provider.rerank({ model, query, documents: batch, signal: deadline.signal }),
        );
        uniqueScores.push(...reply.scores);
        if (reply.totalTokens !== undefined) totalTokens = (totalTokens ?? 0) + reply.totalTokens;
      }
      const scoreOf = new Map(unique.map((document, i) => [document, uniqueScores[i]!]));
      return {
        provider: provider.name,
        model: name,
        scores: documents.map((document) => scoreOf.get(document)!),
        ...(totalTokens === undefined ? {} : { totalTokens }),
      };
    });
  }
}

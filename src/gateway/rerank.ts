/**
 * Rerank over a model's provider chain. Identical documents are scored once, requests larger than
 * an upstream's limit are split into batches (scores are absolute, so batches merge exactly), and
 * the ranking is best first with ties in document order.
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
  /** Every document, best first. */
  ranking: RankedDocument[];
}

export class RerankGateway {
  /** The model that the public alias service-reranker-v1 (and a request naming no model) means. */
  readonly defaultModel: string | undefined;

  constructor(
    private readonly models: ReadonlyMap<string, readonly RerankProvider[]>,
    configuredDefault: string | undefined,
    private readonly upstream: UpstreamCaller,
    private readonly logger: Logger,
  ) {
    this.defaultModel = configuredDefault ?? (models.has(DEFAULT_RERANK_MODEL) ? DEFAULT_RERANK_MODEL : models.keys().next().value);
  }

  /** Model ids a client may send: the configured ones and the default alias. */
  get modelIds(): string[] {
    const ids = [...this.models.keys()];
    return this.defaultModel !== undefined && !ids.includes(DEFAULT_RERANK_MODEL) ? [DEFAULT_RERANK_MODEL, ...ids] : ids;
  }

  /**
   * The provider chain for a model id. 503 while no reranker is configured at all; 400 for a model
   * id that is not one of ours.
   */
  resolveModel(model: string): { id: string; chain: readonly RerankProvider[] } {
    if (this.models.size === 0) {
      throw new ApiError(503, 'no rerank provider is configured on this gateway; add one under rerank.models in the config');
    }
    const id = this.models.has(model) ? model : model === DEFAULT_RERANK_MODEL ? this.defaultModel! : undefined;
    if (id === undefined) throw new ApiError(400, `unknown model "${model}"; available: ${this.modelIds.join(', ')}`);
    return { id, chain: this.models.get(id)! };
  }

  async rerank(request: RerankRequest, deadline: Deadline): Promise<RerankOutcome> {
    const { provider, scores } = await this.score(request.model, request.query, request.documents, deadline);
    const ranking = scores
      .map((score, index) => ({ index, score }))
      .sort((a, b) => b.score - a.score || a.index - b.index);
    return { provider, ranking };
  }

  /** One score per document, in document order, from the first provider of the model's chain that answers. */
  async score(
    modelId: string,
    query: string,
    documents: readonly string[],
    deadline: Deadline,
  ): Promise<{ provider: string; scores: number[] }> {
    const { id: model, chain } = this.resolveModel(modelId);
    const unique = [...new Set(documents)];
    return this.upstream.firstThatAnswers(chain, 'rerank', deadline, async (provider) => {
      const uniqueScores: number[] = [];
      for (let start = 0; start < unique.length; start += provider.capabilities.maxDocuments) {
        const batch = unique.slice(start, start + provider.capabilities.maxDocuments);
        const scores = await this.upstream.withRetries(provider.name, 'rerank', deadline, () =>
          provider.rerank({ model, query, documents: batch, signal: deadline.signal }),
        );
        uniqueScores.push(...scores);
      }
      const scoreOf = new Map(unique.map((document, i) => [document, uniqueScores[i]!]));
      return { provider: provider.name, scores: documents.map((document) => scoreOf.get(document)!) };
    });
  }
}

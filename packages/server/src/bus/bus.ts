/**
 * The bus carries domain events from the service that committed a change to every node's gateway and
 * workers. It speaks Hearth's own terms; an adapter (in-process, Redis) only moves them.
 */
export interface BusEvent {
  /** The event's name, e.g. `APPLICATION_DEAUTHORIZED`. */
  type: string;
  data: Record<string, unknown>;
}

export type BusListener = (event: BusEvent) => void;

export interface Bus {
  /** Delivers `event` to every subscriber on every node. Call only after the change has committed. */
  publish(event: BusEvent): Promise<void>;
  subscribe(listener: BusListener): () => void;
  close(): Promise<void>;
}

/** One node: listeners are called in order, and one throwing does not starve the others. */
export class MemoryBus implements Bus {
  readonly #listeners = new Set<BusListener>();

  async publish(event: BusEvent): Promise<void> {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  subscribe(listener: BusListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
  }
}

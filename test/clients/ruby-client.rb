# Debian's sentry-ruby 5.3 or raven-ruby 3.1 reporting to Lookout (test/sentry-clients.test.ts).
# usage: ruby ruby-client.rb <sentry|raven> <dsn> <tag>
kind, dsn, tag = ARGV

class Checkout
  def total(cart, secret_token)
    cart.fetch(:items).sum / cart.fetch(:count) # ZeroDivisionError
  end
end

def failing
  Checkout.new.total({ items: [3, 4], count: 0 }, 'tok-secret-123')
end

if kind == 'sentry'
  require 'sentry-ruby'
  Sentry.init do |config|
    config.dsn = dsn
    config.release = 'shop@2.0.1'
    config.environment = 'production'
    config.background_worker_threads = 0 # send before the process ends
    config.breadcrumbs_logger = []
  end
  Sentry.set_user(id: '7', email: 'rb@example.com')
  Sentry.set_tags(scenario: tag)
  Sentry.add_breadcrumb(Sentry::Breadcrumb.new(category: 'cart', message: 'rb breadcrumb'))
  begin
    failing
  rescue => e
    Sentry.capture_exception(e)
  end
else
  require 'raven'
  Raven.configure do |config|
    config.dsn = dsn
    config.release = 'shop@2.0.1'
    config.current_environment = 'production'
    config.async = false
    config.logger = Logger.new(nil)
  end
  Raven.user_context(id: '8', email: 'raven@example.com')
  Raven.tags_context(scenario: tag)
  Raven.breadcrumbs.record { |b| b.category = 'cart'; b.message = 'raven breadcrumb' }
  begin
    failing
  rescue => e
    Raven.capture_exception(e)
  end
end
